package org.nnlite.bench

import android.app.Activity
import android.content.Context
import android.content.Intent
import android.content.IntentFilter
import android.os.BatteryManager
import android.os.Build
import android.os.Debug
import android.os.PowerManager
import org.nnlite.bench.core.ConditionsSnapshot
import org.nnlite.bench.core.DeviceProbe
import org.nnlite.bench.core.MemorySnapshot
import org.nnlite.bench.core.SustainedPerformance
import java.io.File
import java.io.IOException

/**
 * The device's conditions and the process's memory, read from the platform (PROTOCOL.md,
 * "Conditions" and "Memory"). Values an API level does not have are null, never guessed:
 * thermal status from API 29, thermal headroom from API 30 (NaN from the platform means "not
 * available", e.g. when asked twice within a second), sustained-performance mode from API 24.
 */
class AndroidProbe(
    private val activity: Activity,
    private val foreground: () -> Boolean,
    private val sustained: SustainedPerformance,
) : DeviceProbe {
    private val power = activity.getSystemService(Context.POWER_SERVICE) as PowerManager

    override fun conditions(): ConditionsSnapshot = ConditionsSnapshot(
        atMs = System.currentTimeMillis(),
        thermalStatus = orNull { if (Build.VERSION.SDK_INT >= Build.VERSION_CODES.Q) power.currentThermalStatus else null },
        thermalHeadroom = orNull {
            if (Build.VERSION.SDK_INT >= Build.VERSION_CODES.R) power.getThermalHeadroom(0).toDouble().takeIf { it.isFinite() } else null
        },
        batteryTemperatureC = orNull { batteryTemperatureC() },
        screenInteractive = orNull { power.isInteractive },
        foreground = foreground(),
        powerSave = orNull { power.isPowerSaveMode },
    )

    /** A value the platform refuses to give (a vendor's SecurityException, a dead service) is unknown, not a failed run. */
    private fun <T> orNull(read: () -> T?): T? = try {
        read()
    } catch (e: RuntimeException) {
        null
    }

    /** EXTRA_TEMPERATURE of the sticky battery broadcast, in tenths of a degree Celsius. */
    private fun batteryTemperatureC(): Double? {
        val sticky: Intent = activity.registerReceiver(null, IntentFilter(Intent.ACTION_BATTERY_CHANGED)) ?: return null
        val tenths = sticky.getIntExtra(BatteryManager.EXTRA_TEMPERATURE, Int.MIN_VALUE)
        return if (tenths == Int.MIN_VALUE) null else tenths / 10.0
    }

    override fun memory(): MemorySnapshot {
        val status = try {
            File("/proc/self/status").readText()
        } catch (e: IOException) {
            null // a kernel without it: VmRSS/VmHWM stay null
        }
        return MemorySnapshot.fromProcStatus(status, Debug.getNativeHeapSize() / 1024, Debug.getNativeHeapAllocatedSize() / 1024)
    }

    override fun sustainedPerformance(): SustainedPerformance = sustained

    companion object {
        /**
         * Ask for sustained-performance mode (a clock level the device can hold without throttling)
         * where supported; must run on the UI thread, before the benchmark starts.
         */
        fun requestSustainedPerformance(activity: Activity): SustainedPerformance {
            val power = activity.getSystemService(Context.POWER_SERVICE) as PowerManager
            if (Build.VERSION.SDK_INT < Build.VERSION_CODES.N) return SustainedPerformance(null, false)
            val supported = power.isSustainedPerformanceModeSupported
            if (supported) activity.window.setSustainedPerformanceMode(true)
            return SustainedPerformance(supported, supported)
        }
    }
}
