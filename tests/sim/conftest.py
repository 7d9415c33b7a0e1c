"""The simulator's fixtures (nnlite_tui/simdevice/fixtures.py).

Only a top-level conftest may declare `pytest_plugins`, so this directory registers the plugin
itself unless tests/conftest.py already did (then every test dir shares one adb server).
"""

PLUGIN = "nnlite_tui.simdevice.fixtures"


def pytest_configure(config):
    if not config.pluginmanager.has_plugin(PLUGIN):
        config.pluginmanager.import_plugin(PLUGIN)
