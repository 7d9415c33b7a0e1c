"""Built-in device profiles: getprop values and the hardware that /proc, /sys and dumpsys describe.

Both profiles are emulator images (the simulator registers as an emulator), so they carry
ro.kernel.qemu=1, ro.boot.qemu=1 and ro.build.characteristics=emulator.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Profile:
    name: str
    props: dict[str, str]
    arch: str  # "arm64" or "x86_64": decides the /proc/cpuinfo format
    cores: int = 4
    max_freq_khz: tuple[int, ...] = (1804800,)
    mem_total_kb: int = 4_027_412
    thermal_zones: tuple[tuple[str, int], ...] = (("cpu-0-0-usr", 36000), ("battery", 27000))
    features: tuple[str, ...] = field(default=("shell_v2", "cmd", "fixed_push_mkdir",
                                               "fixed_push_symlink_timestamp"))


def _common(model: str, product: str, device: str, abi: str, abilist: str, sdk: str, release: str,
            build_id: str, board: str, hardware: str, soc_mfr: str, soc_model: str) -> dict[str, str]:
    fingerprint = f"google/{product}/{device}:{release}/{build_id}/12345678:userdebug/dev-keys"
    return {
        "ro.product.model": model, "ro.product.name": product, "ro.product.device": device,
        "ro.product.manufacturer": "Google", "ro.product.brand": "google",
        "ro.product.board": board, "ro.board.platform": board, "ro.hardware": hardware,
        "ro.product.cpu.abi": abi, "ro.product.cpu.abilist": abilist,
        "ro.product.cpu.abilist64": abilist, "ro.product.cpu.abilist32": "",
        "ro.build.version.sdk": sdk, "ro.build.version.release": release,
        "ro.build.version.release_or_codename": release, "ro.build.version.codename": "REL",
        "ro.build.id": build_id, "ro.build.display.id": f"{product}-userdebug {release} {build_id}",
        "ro.build.fingerprint": fingerprint, "ro.build.type": "userdebug", "ro.build.tags": "dev-keys",
        "ro.build.characteristics": "emulator", "ro.kernel.qemu": "1", "ro.boot.qemu": "1",
        "ro.soc.manufacturer": soc_mfr, "ro.soc.model": soc_model,
        "ro.serialno": "EMULATOR35X1X11X0", "ro.boot.serialno": "EMULATOR35X1X11X0",
        "ro.debuggable": "1", "ro.secure": "1", "ro.adb.secure": "0",
        "persist.sys.timezone": "Etc/UTC", "ro.product.locale": "en-US",
        "dalvik.vm.heapsize": "512m",
    }


PROFILES: dict[str, Profile] = {
    "emu-arm64": Profile(
        name="emu-arm64", arch="arm64", cores=4, max_freq_khz=(1804800, 1804800, 2419200, 2419200),
        props=_common("sdk_gphone64_arm64", "sdk_gphone64_arm64", "emu64a", "arm64-v8a", "arm64-v8a",
                      "34", "14", "UE1A.230829.036", "goldfish_arm64", "ranchu", "Google", "Emulator"),
        thermal_zones=(("cpu-0-0-usr", 36000), ("cpu-1-0-usr", 37000), ("battery", 27000),
                       ("skin-therm", 30000)),
    ),
    "emu-x86_64": Profile(
        name="emu-x86_64", arch="x86_64", cores=2, max_freq_khz=(2200000, 2200000),
        props=_common("sdk_gphone64_x86_64", "sdk_gphone64_x86_64", "emu64x", "x86_64",
                      "x86_64,arm64-v8a", "33", "13", "TE1A.220922.034", "goldfish_x86_64", "ranchu",
                      "Intel", "Emulator"),
        mem_total_kb=2_030_172,
        thermal_zones=(("cpu-0-0-usr", 40000), ("battery", 26000)),
    ),
}
DEFAULT_PROFILE = "emu-arm64"


def get_profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(f"unknown profile {name!r}; built-in: {', '.join(sorted(PROFILES))}") from None
