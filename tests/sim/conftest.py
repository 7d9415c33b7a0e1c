"""The simulator's fixtures (tests/sim_plugin.py).

Only a top-level conftest may declare `pytest_plugins`, so this directory registers the plugin
itself unless tests/conftest.py already did (then every test dir shares one adb server).
"""

PLUGIN = "tests.sim_plugin"


def pytest_configure(config):
    if not config.pluginmanager.has_plugin(PLUGIN):
        config.pluginmanager.import_plugin(PLUGIN)
