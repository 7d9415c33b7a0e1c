"""Screens: the main console, a model's detail, help, and the quit confirmation."""
