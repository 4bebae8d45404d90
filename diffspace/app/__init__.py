"""The application layer: the ``diffspace`` command line, results directories and their manifests, the
persistent compilation cache, fit reports and the benchmarks."""
