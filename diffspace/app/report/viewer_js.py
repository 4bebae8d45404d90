"""The report's script: draws each embedded scene with Plotly's 3-D traces (mesh3d, scatter3d) and moves them
with play/pause, a time slider and a speed choice; ``#t=1.5`` in the address sets the time. Orbit and zoom are
Plotly's. The embedded plots are drawn with ``Plotly.newPlot``. No network, no server."""

VIEWER_JS = r"""
(function () {
  "use strict";
  const DATA = JSON.parse(document.getElementById("diffspace-data").textContent);
  const viewers = [];

  function hashTime() {
    const m = /(?:^#|&)t=([-+0-9.eE]+)/.exec(window.location.hash);
    return m ? parseFloat(m[1]) : null;
  }

  function frameAt(times, t) {
    let best = 0;
    for (let i = 0; i < times.length; i++) { if (times[i] <= t + 1e-12) best = i; }
    return best;
  }

  function bodyXYZ(b, k) {
    const R = b.rot.slice(9 * k, 9 * k + 9), p = b.pos.slice(3 * k, 3 * k + 3), v = b.v;
    const n = v.length / 3, x = new Array(n), y = new Array(n), z = new Array(n);
    for (let i = 0; i < n; i++) {
      const a = v[3 * i], c = v[3 * i + 1], d = v[3 * i + 2];
      x[i] = R[0] * a + R[1] * c + R[2] * d + p[0];
      y[i] = R[3] * a + R[4] * c + R[5] * d + p[1];
      z[i] = R[6] * a + R[7] * c + R[8] * d + p[2];
    }
    return [x, y, z];
  }

  function pointsXYZ(p, count, k) {
    const x = [], y = [], z = [];
    for (let i = 0; i < count; i++) {
      const o = 3 * (k * count + i);
      x.push(p[o]); y.push(p[o + 1]); z.push(p[o + 2]);
    }
    return [x, y, z];
  }

  function arrowXYZ(a, k) {
    const x = [], y = [], z = [], text = [];
    for (let i = 0; i < a.k; i++) {
      const o = 3 * (k * a.k + i), m = a.m[k * a.k + i];
      if (m === null || !(m > 0)) continue;
      x.push(a.o[o], a.o[o] + a.d[o], null);
      y.push(a.o[o + 1], a.o[o + 1] + a.d[o + 1], null);
      z.push(a.o[o + 2], a.o[o + 2] + a.d[o + 2], null);
      const label = m.toPrecision(4) + " " + a.unit;
      text.push(label, label, "");
    }
    return [x, y, z, text];
  }

  function split(list, count) {
    const out = [];
    for (let i = 0; i < list.length; i += count) out.push(list.slice(i, i + count));
    return out;
  }

  function frameData(s, k) {
    const x = [], y = [], z = [], text = [];
    s.bodies.forEach(b => { const q = bodyXYZ(b, k); x.push(q[0]); y.push(q[1]); z.push(q[2]); text.push(null); });
    s.lines.forEach(l => { const q = pointsXYZ(l.p, l.k, k); x.push(q[0]); y.push(q[1]); z.push(q[2]); text.push(null); });
    s.surfaces.forEach(f => { const q = pointsXYZ(f.p, f.k, k); x.push(q[0]); y.push(q[1]); z.push(q[2]); text.push(null); });
    s.arrows.forEach(a => { const q = arrowXYZ(a, k); x.push(q[0]); y.push(q[1]); z.push(q[2]); text.push(q[3]); });
    return {x: x, y: y, z: z, text: text};
  }

  function staticTraces(s) {
    const L = s.axis_length, names = ["x", "y", "z"], colors = ["#d62728", "#2ca02c", "#1f77b4"];
    return names.map((n, i) => {
      const e = [0, 0, 0]; e[i] = L;
      return {type: "scatter3d", mode: "lines+text", x: [0, e[0]], y: [0, e[1]], z: [0, e[2]], text: ["", n],
              line: {color: colors[i], width: 6}, name: "world " + n, legendgroup: "world", showlegend: i === 0,
              hoverinfo: "name"};
    });
  }

  function movingTraces(s, k) {
    const d = frameData(s, k), traces = [];
    let t = 0;
    s.bodies.forEach(b => {
      const f = split(b.f, 3);
      traces.push({type: "mesh3d", name: b.name, x: d.x[t], y: d.y[t], z: d.z[t], i: f.map(r => r[0]),
                   j: f.map(r => r[1]), k: f.map(r => r[2]), color: b.color, opacity: b.opacity, flatshading: true,
                   lighting: {ambient: 0.55, diffuse: 0.7, specular: 0.1}, showlegend: true, hoverinfo: "name"});
      t++;
    });
    s.lines.forEach(l => {
      traces.push({type: "scatter3d", mode: "lines+markers", name: l.name, x: d.x[t], y: d.y[t], z: d.z[t],
                   line: {color: l.color, width: l.width}, marker: {size: 2, color: l.color}, hoverinfo: "name"});
      t++;
    });
    s.surfaces.forEach(f => {
      const g = split(f.f, 3);
      traces.push({type: "mesh3d", name: f.name, x: d.x[t], y: d.y[t], z: d.z[t], i: g.map(r => r[0]),
                   j: g.map(r => r[1]), k: g.map(r => r[2]), color: f.color, opacity: f.opacity, flatshading: true,
                   showlegend: true, hoverinfo: "name"});
      t++;
    });
    s.arrows.forEach(a => {
      traces.push({type: "scatter3d", mode: "lines+markers", name: a.name, x: d.x[t], y: d.y[t], z: d.z[t],
                   text: d.text[t], hoverinfo: "text+name", line: {color: a.color, width: 7},
                   marker: {size: 3, color: a.color}});
      t++;
    });
    return traces;
  }

  function layoutOf(s) {
    const b = s.bounds, span = [b[1] - b[0], b[3] - b[2], b[5] - b[4]], m = Math.max(...span);
    const axis = (lo, hi, title) => ({range: [lo, hi], title: {text: title}, backgroundcolor: "#f4f6f8",
                                      showbackground: true});
    return {margin: {l: 0, r: 0, t: 10, b: 0}, uirevision: "keep", showlegend: true,
            legend: {font: {size: 10}, x: 0, y: 1, bgcolor: "rgba(255,255,255,0.7)"},
            scene: {xaxis: axis(b[0], b[1], "x [m]"), yaxis: axis(b[2], b[3], "y [m]"), zaxis: axis(b[4], b[5], "z [m]"),
                    aspectmode: "manual", aspectratio: {x: span[0] / m, y: span[1] / m, z: span[2] / m},
                    camera: {eye: s.camera.eye, up: s.camera.up}}};
  }

  function Viewer(root, s) {
    const plot = root.querySelector(".plot3d"), slider = root.querySelector("input[type=range]");
    const label = root.querySelector(".time"), play = root.querySelector("button.play");
    const speed = root.querySelector("select.speed");
    const nStatic = 3, moving = [];
    let k = 0, playing = false, last = null, simTime = s.times[0];
    for (let i = 0; i < s.bodies.length + s.lines.length + s.surfaces.length + s.arrows.length; i++) moving.push(nStatic + i);
    slider.max = s.times.length - 1;

    function show(index, fromSlider) {
      k = Math.max(0, Math.min(s.times.length - 1, index));
      const d = frameData(s, k);
      if (moving.length) Plotly.restyle(plot, {x: d.x, y: d.y, z: d.z, text: d.text}, moving);
      if (!fromSlider) slider.value = k;
      label.textContent = "t = " + s.times[k].toFixed(4) + " s";
      root.dataset.frameTime = String(s.times[k]);
    }
    this.setTime = function (t) { simTime = t; show(frameAt(s.times, t)); };
    this.ready = Plotly.newPlot(plot, staticTraces(s).concat(movingTraces(s, 0)), layoutOf(s),
                                {responsive: true, displaylogo: false}).then(() => {
      const t = hashTime();
      this.setTime(t === null ? s.times[0] : t);
      root.dataset.ready = "1";
    });
    slider.addEventListener("input", () => { show(parseInt(slider.value, 10), true); simTime = s.times[k];
      history.replaceState(null, "", "#t=" + s.times[k].toPrecision(6)); });
    function tick(now) {
      if (!playing) return;
      if (last !== null) simTime += (now - last) / 1000 * parseFloat(speed.value);
      last = now;
      if (simTime > s.times[s.times.length - 1]) simTime = s.times[0];
      show(frameAt(s.times, simTime));
      requestAnimationFrame(tick);
    }
    play.addEventListener("click", () => {
      playing = !playing; last = null; play.textContent = playing ? "pause" : "play";
      if (playing) requestAnimationFrame(tick);
    });
  }

  document.querySelectorAll(".viewer").forEach(root => {
    viewers.push(new Viewer(root, DATA.scenes[parseInt(root.dataset.scene, 10)]));
  });
  window.addEventListener("hashchange", () => {
    const t = hashTime();
    if (t !== null) viewers.forEach(v => v.setTime(t));
  });
  document.querySelectorAll(".figure").forEach(div => {
    const fig = DATA.figures[parseInt(div.dataset.figure, 10)];
    Plotly.newPlot(div, fig.data, fig.layout, {responsive: true, displaylogo: false});
  });
  Promise.all(viewers.map(v => v.ready)).then(() => { document.documentElement.dataset.ready = "1"; });
})();
"""

PLOTLY_LOADER_JS = r"""
window.diffspacePlotly = (async function () {
  const packed = document.getElementById("diffspace-plotly").textContent;
  const bytes = Uint8Array.from(atob(packed), c => c.charCodeAt(0));
  const unpacked = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  const script = document.createElement("script");
  script.text = await new Response(unpacked).text();
  document.head.appendChild(script);
})();
"""

ERROR_HOOK_JS = r"""
window.diffspaceErrors = [];
(function () {
  function record(text) {
    window.diffspaceErrors.push(String(text));
    document.documentElement.dataset.errors = String(window.diffspaceErrors.length);
    const pre = document.getElementById("diffspace-errors");
    if (pre) pre.textContent = window.diffspaceErrors.join("\n");
  }
  window.addEventListener("error", e => record((e.message || "error") + " at " + (e.filename || "") + ":" + (e.lineno || "")));
  window.addEventListener("unhandledrejection", e => record("unhandled rejection: " + (e.reason && e.reason.stack || e.reason)));
  const original = console.error;
  console.error = function () { record(Array.from(arguments).join(" ")); original.apply(console, arguments); };
})();
"""
