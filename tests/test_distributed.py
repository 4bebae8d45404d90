"""Several processes sharing one command (coordinator on 127.0.0.1, the toy scenario): two and four processes
give results identical to one, compute every chunk exactly once, and a killed job resumes without recomputing
any finished chunk; a process that dies mid-run loses only its chunk in flight, which process 0 completes
(slow: it waits out the runtime's heartbeat timeout)."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from diffspace import scenarios
from diffspace.app.cli import main

from .toy_scenario import ENTRY, cli_process, constrained_optimize_table

TOY = "[toy]\nrate = 1.0\namplitude = 2.0\n"
MONTECARLO = """
[montecarlo]
samples = 96
seed = 4
sensitivity = ["local", "sobol"]
chunk_size = 16
bootstrap = 100
[montecarlo.dispersions]
"toy.rate" = {distribution = "normal", std = 0.3, lower = 0.2}
"toy.amplitude" = {distribution = "lognormal", std = 0.5}
"""
SWEEP = '\n[sweep]\nchunk_size = 4\ngradients = true\n[sweep.axes]\n"toy.rate" = {start = 0.0, stop = 12.0, num = 25}\n'
TIMING = ("computed_cases", "cases_per_s", "processes", "cases_by_process", "time_s")


@pytest.fixture(autouse=True)
def registered(monkeypatch):
    monkeypatch.setitem(scenarios.REGISTRY, "toy", ENTRY)


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(command: str, config: Path, out: Path, n: int, watched: int | None = None) -> list[subprocess.Popen]:
    """``n`` processes of one job; process ``watched`` (if any) shows its progress bar on a pipe."""
    port = _port()
    return [cli_process([command, str(config), "--out", str(out), "--coordinator", f"127.0.0.1:{port}",
                         "--num-processes", str(n), "--process-id", str(i), *([] if i == watched else ["--quiet"])],
                        stderr=subprocess.PIPE if i == watched else subprocess.DEVNULL)
            for i in range(n)]


def _wait_for_own_cases(process: subprocess.Popen, count: int) -> None:
    """Read the process's progress bar (``N case`` counts of its own cases) until it reaches ``count``."""
    seen, deadline = "", time.time() + 300
    while time.time() < deadline:
        seen += os.read(process.stderr.fileno(), 4096).decode(errors="replace")
        counts = [int(c) for c in re.findall(r"(\d+) ?case", seen)]
        if counts and max(counts) >= count:
            return
    raise AssertionError(f"the process did not compute {count} cases: {seen[-300:]}")


def _run(command: str, config: Path, out: Path, n: int) -> dict:
    assert [p.wait(timeout=600) for p in _start(command, config, out, n)] == [0] * n
    return json.loads((out / "summary.json").read_text())


def _config(tmp_path: Path, table: str) -> Path:
    path = tmp_path / "toy.toml"
    path.write_text(TOY + table)
    return path


@pytest.mark.timeout(900)
@pytest.mark.parametrize("command, table", [("montecarlo", MONTECARLO), ("sweep", SWEEP)])
def test_two_and_four_processes_equal_one(tmp_path, command, table):
    config = _config(tmp_path, table)
    one = tmp_path / "one"
    assert main([command, str(config), "--out", str(one), "--quiet"]) == 0
    reference = json.loads((one / "summary.json").read_text())
    total = reference["computed_cases"]
    for n in ((2, 4) if command == "montecarlo" else (2,)):
        out = tmp_path / f"n{n}"
        summary = _run(command, config, out, n)
        assert (out / "results.csv").read_text() == (one / "results.csv").read_text()
        assert {k: v for k, v in summary.items() if k not in TIMING} == \
               {k: v for k, v in reference.items() if k not in TIMING}
        assert summary["processes"] == n and set(summary["cases_by_process"]) == {str(i) for i in range(n)}
        assert sum(summary["cases_by_process"].values()) == summary["computed_cases"] == total  # none twice
        assert not Path(str(out) + ".partial").exists() and (out / "report.html").is_file()


OPTIMIZE = constrained_optimize_table(steps=20, sweep_samples=24, chunk_size=4)


@pytest.mark.timeout(900)
def test_optimize_shares_its_sweep_and_finds_the_same_optimum(tmp_path):
    config = _config(tmp_path, OPTIMIZE)
    one, two = tmp_path / "one", tmp_path / "two"
    assert main(["optimize", str(config), "--out", str(one), "--quiet"]) == 0
    summary = _run("optimize", config, two, 2)
    assert summary == json.loads((one / "summary.json").read_text())
    assert (two / "sweep.csv").read_text() == (one / "sweep.csv").read_text()
    assert not (two / "store").exists()


ROBUST = OPTIMIZE + """
[optimize.uncertainty]
samples = 32
validation_samples = 64
[montecarlo.dispersions]
"toy.amplitude" = {distribution = "normal", std = 0.1}
"toy.rate" = {distribution = "normal", std = 0.05}
""".replace("constraints = {final_value = {upper = 1.5}}",
            'constraints = {final_value = {upper = 1.5, statistic = "mean+2std"}}')


@pytest.mark.timeout(900)
def test_robust_optimize_on_two_processes_finds_what_one_finds(tmp_path):
    """Under uncertainty the sweep is shared and process 0 runs the searches and the out-of-sample check: the
    summary equals one process's."""
    config = _config(tmp_path, ROBUST)
    one, two = tmp_path / "one", tmp_path / "two"
    assert main(["optimize", str(config), "--out", str(one), "--quiet"]) == 0
    summary = _run("optimize", config, two, 2)
    assert summary == json.loads((one / "summary.json").read_text())
    assert summary["out_of_sample"]["robust"]["samples"] == 64 and not (two / "store").exists()


def _wait_for_chunks(store: Path, count: int) -> None:
    deadline = time.time() + 300
    while time.time() < deadline and len(list(store.glob("chunk_*.npz"))) < count:
        time.sleep(0.05)


MANY_CHUNKS = MONTECARLO.replace("samples = 96", "samples = 150").replace("chunk_size = 16", "chunk_size = 1")


@pytest.mark.timeout(900)
def test_killed_job_resumes_and_recomputes_nothing_finished(tmp_path):
    config = _config(tmp_path, MANY_CHUNKS)
    reference = tmp_path / "reference"
    assert main(["montecarlo", str(config), "--out", str(reference), "--quiet"]) == 0
    out = tmp_path / "killed"
    store = Path(str(out) + ".partial") / "store"
    processes = _start("montecarlo", config, out, 2)
    _wait_for_chunks(store, 20)
    for p in processes:
        p.send_signal(signal.SIGKILL)
        p.wait()
    finished = sorted(store.glob("chunk_*.npz"))
    assert 20 <= len(finished) < 600, "the job was not interrupted mid-run"
    stamps = {p.name: p.stat().st_mtime_ns for p in finished}
    summary = _run("montecarlo", config, out, 2)
    assert summary["computed_cases"] == 600 - len(stamps)
    for name, stamp in stamps.items():
        assert (out / "store" / name).stat().st_mtime_ns == stamp
    assert (out / "results.csv").read_text() == (reference / "results.csv").read_text()
    assert not list((out / "store").glob(".chunk_*"))


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_process_that_dies_loses_only_its_chunk_in_flight(tmp_path):
    """Process 1 is killed once it has computed cases of its own; process 0 goes on, notices it stopped (the
    distributed runtime's heartbeat timeout, 100 s), completes the chunk it had in flight and writes results
    identical to one process's."""
    config = _config(tmp_path, MANY_CHUNKS)
    reference = tmp_path / "reference"
    assert main(["montecarlo", str(config), "--out", str(reference), "--quiet"]) == 0
    out = tmp_path / "out"
    lead, other = _start("montecarlo", config, out, 2, watched=1)
    _wait_for_own_cases(other, 3)
    other.send_signal(signal.SIGKILL)
    other.wait()
    assert lead.wait(timeout=600) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["cases_by_process"]["1"] is None and 0 < summary["cases_by_process"]["0"] < 600
    assert (out / "results.csv").read_text() == (reference / "results.csv").read_text()


@pytest.mark.parametrize("flags, message", [
    (["--coordinator", "127.0.0.1:1234"], "go together"),
    (["--coordinator", "127.0.0.1:1234", "--num-processes", "2", "--process-id", "2"], "--process-id"),
    (["--num-processes", "0", "--process-id", "0", "--coordinator", "127.0.0.1:1234"], "--num-processes"),
    (["--distributed"], "no cluster detected"),
])
def test_bad_process_flags_exit_2_with_one_line(tmp_path, capsys, monkeypatch, flags, message):
    for name in [n for n in os.environ if n.startswith(("SLURM_", "OMPI_", "PMI_", "KUBERNETES_", "JAX_COORD"))]:
        monkeypatch.delenv(name)  # no cluster to detect
    config = _config(tmp_path, MONTECARLO)
    assert main(["montecarlo", str(config), "--out", str(tmp_path / "x"), "--quiet", *flags]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("process_id", [0, 1])
def test_a_missing_peer_ends_the_wait_with_one_line_and_exit_2(tmp_path, process_id):
    """Process 1 (or 0) of 2 never starts: the one that did waits ``--coordinator-timeout`` seconds, says how
    long it has waited and for whom, and stops with one line and exit 2 (JAX's own join would abort after
    5 min with a C++ trace)."""
    config = _config(tmp_path, MONTECARLO)
    started = time.monotonic()
    process = cli_process(["montecarlo", str(config), "--out", str(tmp_path / "x"), "--quiet",
                           "--coordinator", f"127.0.0.1:{_port()}", "--num-processes", "2",
                           "--process-id", str(process_id), "--coordinator-timeout", "12"],
                          stderr=subprocess.PIPE, text=True)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 2 and time.monotonic() - started < 60, err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "--coordinator-timeout" in errors[0], err
    assert ("1 of 2 processes did not join within 12 s (process id 1)" if process_id == 0
            else "process 0 did not answer within 12 s") in errors[0]
    if process_id == 0:
        assert "waiting for 1 of 2 processes to join" in err  # progress while it waits
    assert not [line for line in err.splitlines() if line and not line.startswith(("error:", "waiting for"))], err


def test_rendezvous_joins_processes_that_start_late():
    """Process 1 starts 1.5 s after process 0 (process 0 not listening yet is retried): both return."""
    import threading

    from diffspace.app.rendezvous import gather

    port, errors = _port(), []

    def follower():
        try:
            gather(f"127.0.0.1:{port}", 2, 1, 20.0)
        except Exception as err:  # noqa: BLE001  reported below
            errors.append(err)

    thread = threading.Thread(target=follower)
    thread.start()
    time.sleep(1.5)
    gather(f"127.0.0.1:{port}", 2, 0, 20.0, say=errors.append)
    thread.join(timeout=30)
    assert not thread.is_alive() and errors == []
