"""Devices a unit can be benchmarked on: the host (each runtime's interpreter in Python), adb devices and emulators."""
