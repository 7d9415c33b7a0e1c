package org.nnlite.bench

import android.content.Context
import android.content.Intent
import android.content.IntentFilter
import android.os.BatteryManager
import org.nnlite.bench.core.BatteryReading
import org.nnlite.bench.core.BatterySource
import org.nnlite.bench.core.BatteryState
import org.nnlite.bench.core.CounterSources
import java.io.File
import java.io.IOException

/**
 * The battery counters for the energy windows (PROTOCOL.md, "Energy"). Each counter is read where the
 * device gives it, chosen once by a first read:
 * - current: `BatteryManager.getIntProperty(BATTERY_PROPERTY_CURRENT_NOW)` (µA), else sysfs `current_now`;
 * - charge: `getIntProperty(BATTERY_PROPERTY_CHARGE_COUNTER)` (µAh), else sysfs `charge_counter`;
 * - voltage: sysfs `voltage_now` (µV), else the sticky broadcast's `EXTRA_VOLTAGE` (mV), read at most once a second.
 * With targetSdk >= 28 getIntProperty answers Integer.MIN_VALUE for a property the device lacks.
 */
class AndroidBattery(private val context: Context) : BatterySource {
    private val manager = context.getSystemService(Context.BATTERY_SERVICE) as BatteryManager

    private class Counter(val name: String?, val read: () -> Long?)

    private val current: Counter by lazy {
        property(BatteryManager.BATTERY_PROPERTY_CURRENT_NOW, "BatteryManager.BATTERY_PROPERTY_CURRENT_NOW") ?: sysfs("current_now")
    }
    private val charge: Counter by lazy {
        property(BatteryManager.BATTERY_PROPERTY_CHARGE_COUNTER, "BatteryManager.BATTERY_PROPERTY_CHARGE_COUNTER") ?: sysfs("charge_counter")
    }
    private val voltage: Counter by lazy { sysfs("voltage_now").takeIf { it.name != null } ?: broadcastVoltage() }

    private fun property(id: Int, name: String): Counter? {
        val read = { orNull { manager.getIntProperty(id).takeIf { it != Int.MIN_VALUE }?.toLong() } }
        return if (read() == null) null else Counter(name, read)
    }

    private fun sysfs(file: String): Counter {
        val f = File(POWER_SUPPLY, file)
        val read = {
            try {
                f.readText().trim().toLongOrNull()
            } catch (e: IOException) {
                null // absent, or SELinux keeps apps out of power_supply on this device
            }
        }
        return if (read() == null) Counter(null) { null } else Counter(f.path, read)
    }

    private var cachedVoltageUv: Long? = null
    private var cachedAtMs = 0L

    private fun broadcastVoltage(): Counter {
        val read = {
            val now = System.currentTimeMillis()
            if (now - cachedAtMs >= 1000) {
                cachedVoltageUv = sticky()?.let { intExtra(it, BatteryManager.EXTRA_VOLTAGE) }?.let { it * 1000L }
                cachedAtMs = now
            }
            cachedVoltageUv
        }
        return if (read() == null) Counter(null) { null } else Counter("ACTION_BATTERY_CHANGED EXTRA_VOLTAGE", read)
    }

    override fun sources(): CounterSources = CounterSources(current.name, charge.name, voltage.name)

    override fun read(atNs: Long): BatteryReading = BatteryReading(atNs, current.read(), charge.read(), voltage.read())

    override fun state(): BatteryState {
        val intent = sticky()
        fun extra(name: String): Int? = intent?.let { intExtra(it, name) }
        return BatteryState(
            atMs = System.currentTimeMillis(),
            levelPercent = BatteryState.levelPercent(extra(BatteryManager.EXTRA_LEVEL), extra(BatteryManager.EXTRA_SCALE)),
            temperatureC = extra(BatteryManager.EXTRA_TEMPERATURE)?.let { it / 10.0 },
            voltageMv = extra(BatteryManager.EXTRA_VOLTAGE)?.toLong(),
            plugged = extra(BatteryManager.EXTRA_PLUGGED),
            status = extra(BatteryManager.EXTRA_STATUS),
        )
    }

    /** The sticky ACTION_BATTERY_CHANGED broadcast (no receiver registered: a null receiver only reads it). */
    private fun sticky(): Intent? = orNull { context.registerReceiver(null, IntentFilter(Intent.ACTION_BATTERY_CHANGED)) }

    private fun intExtra(intent: Intent, name: String): Int? = intent.getIntExtra(name, Int.MIN_VALUE).takeIf { it != Int.MIN_VALUE }

    /** A counter the platform refuses (a vendor's SecurityException, a dead service) is unreadable, not a failed run. */
    private fun <T> orNull(read: () -> T?): T? = try {
        read()
    } catch (e: RuntimeException) {
        null
    }

    companion object {
        const val POWER_SUPPLY = "/sys/class/power_supply/battery"
    }
}
