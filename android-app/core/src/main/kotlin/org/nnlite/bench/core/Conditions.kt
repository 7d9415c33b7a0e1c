package org.nnlite.bench.core

/**
 * The device's state at one moment (PROTOCOL.md, "Conditions"). Null where this API level or
 * device does not have the value: thermal status needs API 29, thermal headroom API 30 (and NaN
 * from the platform, which means "not available", is null here).
 */
data class ConditionsSnapshot(
    val atMs: Long,
    val thermalStatus: Int?,
    val thermalHeadroom: Double?,
    val batteryTemperatureC: Double?,
    val screenInteractive: Boolean?,
    val foreground: Boolean?,
    val powerSave: Boolean?,
) {
    fun toMap(): Map<String, Any?> = linkedMapOf(
        "at_ms" to atMs,
        "thermal_status" to thermalStatus,
        "thermal_status_name" to thermalStatus?.let { Conditions.statusName(it) },
        "thermal_headroom" to thermalHeadroom?.takeIf { it.isFinite() },
        "battery_temperature_c" to batteryTemperatureC,
        "screen_interactive" to screenInteractive,
        "foreground" to foreground,
        "power_save" to powerSave,
    )
}

/** Sustained-performance mode: whether the device supports it and whether the app turned it on. */
data class SustainedPerformance(val supported: Boolean?, val enabled: Boolean) {
    fun toMap(): Map<String, Any?> = linkedMapOf("supported" to supported, "enabled" to enabled)
}

/** Process memory at one moment: /proc/self/status VmRSS and VmHWM, and the native heap. */
data class MemorySnapshot(
    val vmRssKb: Long?,
    val vmHwmKb: Long?,
    val nativeHeapSizeKb: Long?,
    val nativeHeapAllocatedKb: Long?,
) {
    fun toMap(): Map<String, Any?> = linkedMapOf(
        "vm_rss_kb" to vmRssKb, "vm_hwm_kb" to vmHwmKb,
        "native_heap_size_kb" to nativeHeapSizeKb, "native_heap_allocated_kb" to nativeHeapAllocatedKb,
    )

    companion object {
        /** VmRSS and VmHWM (kB) from the text of /proc/self/status; null where a line is missing. */
        fun fromProcStatus(text: String?, nativeHeapSizeKb: Long?, nativeHeapAllocatedKb: Long?): MemorySnapshot {
            fun kb(key: String): Long? = text?.lineSequence()
                ?.firstOrNull { it.startsWith("$key:") }
                ?.substringAfter(':')?.trim()?.removeSuffix("kB")?.trim()?.toLongOrNull()
            return MemorySnapshot(kb("VmRSS"), kb("VmHWM"), nativeHeapSizeKb, nativeHeapAllocatedKb)
        }
    }
}

/**
 * What the app can read about the device and its own process. The Android app reads
 * PowerManager, the battery broadcast, ActivityManager and /proc/self/status; tests script it.
 */
interface DeviceProbe {
    fun conditions(): ConditionsSnapshot

    fun memory(): MemorySnapshot

    /** Request sustained-performance mode where supported (once, before the runs); what happened. */
    fun sustainedPerformance(): SustainedPerformance
}

/** A probe that knows nothing: every value null (used where no device is behind the core). */
object NoProbe : DeviceProbe {
    override fun conditions() = ConditionsSnapshot(System.currentTimeMillis(), null, null, null, null, null, null)
    override fun memory() = MemorySnapshot(null, null, null, null)
    override fun sustainedPerformance() = SustainedPerformance(null, false)
}

object Conditions {
    /** PowerManager.THERMAL_STATUS_* names, index = status. */
    val STATUS_NAMES = listOf("none", "light", "moderate", "severe", "critical", "emergency", "shutdown")

    /** PowerManager.THERMAL_STATUS_LIGHT: the platform's first throttling level. */
    const val THROTTLING_STATUS = 1

    /** getThermalHeadroom: 1.0 is where the device reaches THERMAL_STATUS_SEVERE. */
    const val THROTTLING_HEADROOM = 1.0

    fun statusName(status: Int): String = STATUS_NAMES.getOrElse(status) { "unknown($status)" }

    /**
     * Whether the device throttled around the timed runs: true if any snapshot shows a thermal
     * status of LIGHT or worse or a headroom of 1.0 or more; false if a status was read and shows
     * none; null when nothing thermal could be read (below API 29).
     */
    fun throttled(snapshots: List<ConditionsSnapshot>): Boolean? {
        val statuses = snapshots.mapNotNull { it.thermalStatus }
        val headrooms = snapshots.mapNotNull { it.thermalHeadroom?.takeIf { h -> h.isFinite() } }
        if (statuses.any { it >= THROTTLING_STATUS } || headrooms.any { it >= THROTTLING_HEADROOM }) return true
        return if (statuses.isNotEmpty() || headrooms.isNotEmpty()) false else null
    }

    fun block(before: ConditionsSnapshot, after: ConditionsSnapshot?, sustained: SustainedPerformance, source: String = "device"): Map<String, Any?> =
        linkedMapOf(
            "source" to source,
            "before" to before.toMap(),
            "after" to after?.toMap(),
            "throttled" to throttled(listOfNotNull(before, after)),
            "sustained_performance" to sustained.toMap(),
        )
}
