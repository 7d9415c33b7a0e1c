"""Devices a model can be benchmarked on: the host (LiteRT in Python), adb devices and emulators."""
