"""The simulated display: on or off, keyguard locked or not, and the shell commands that change it
(`input keyevent KEYCODE_WAKEUP|KEYCODE_SLEEP|KEYCODE_POWER`, `wm dismiss-keyguard`).

The benchmark app asks to show over the keyguard and turn the screen on; what it cannot do is
wake a screen that is off before it starts, which is why the host wakes it first. The simulated
app reports `screen_interactive`/`foreground` from this state.
"""

from __future__ import annotations

from dataclasses import dataclass

# KeyEvent codes: the names `input keyevent` takes, and their numbers.
KEYCODES = {"KEYCODE_POWER": 26, "KEYCODE_SLEEP": 223, "KEYCODE_WAKEUP": 224, "KEYCODE_MENU": 82}


@dataclass
class Screen:
    on: bool = True
    locked: bool = False
    wakeups: int = 0  # how many times something woke it (tests check the host did)

    def keyevent(self, code: int) -> None:
        if code == KEYCODES["KEYCODE_WAKEUP"] or (code == KEYCODES["KEYCODE_POWER"] and not self.on):
            self.on = True
            self.wakeups += 1
        elif code in (KEYCODES["KEYCODE_SLEEP"], KEYCODES["KEYCODE_POWER"]):
            self.on = False
            self.locked = True  # turning the screen off locks it, as with a swipe keyguard

    def dismiss_keyguard(self) -> None:
        if self.on:  # `wm dismiss-keyguard` does nothing for a dark screen
            self.locked = False

    @property
    def interactive(self) -> bool:
        """PowerManager.isInteractive: the screen is on (locked or not)."""
        return self.on
