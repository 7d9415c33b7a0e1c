"""The Textual-free core: sources, conversion, benchmarking, devices, reports, store and pipeline."""
