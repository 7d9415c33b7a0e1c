package org.nnlite.bench.core

import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.locks.LockSupport

/**
 * One reading of the battery counters (PROTOCOL.md, "Energy"), stamped with the sampler's clock:
 * `CURRENT_NOW` in µA (with the vendor's sign), `CHARGE_COUNTER` in µAh, the voltage in µV.
 * Null where the device does not give that counter.
 */
data class BatteryReading(val atNs: Long, val currentUa: Long?, val chargeUah: Long?, val voltageUv: Long?)

/** Where each counter is read on this device (null: not readable), decided once before the windows. */
data class CounterSources(val currentNow: String?, val chargeCounter: String?, val voltage: String?) {
    fun toMap(): Map<String, Any?> = linkedMapOf("current_now" to currentNow, "charge_counter" to chargeCounter, "voltage" to voltage)
}

/**
 * The sticky `ACTION_BATTERY_CHANGED` broadcast at one moment: level (`EXTRA_LEVEL` / `EXTRA_SCALE`
 * in %), temperature (`EXTRA_TEMPERATURE` / 10, °C), voltage (`EXTRA_VOLTAGE`, mV), `EXTRA_PLUGGED`
 * (0 on battery, else BATTERY_PLUGGED_* bits) and `EXTRA_STATUS` (BATTERY_STATUS_*). Null where absent.
 */
data class BatteryState(
    val atMs: Long,
    val levelPercent: Double?,
    val temperatureC: Double?,
    val voltageMv: Long?,
    val plugged: Int?,
    val status: Int?,
) {
    /**
     * On a charger or charging: the counters then describe the charger's supply, not the load.
     * Null when neither `plugged` nor `status` could be read.
     */
    val charging: Boolean?
        get() = when {
            plugged == null && status == null -> null
            plugged != null && plugged != 0 -> true
            else -> status == STATUS_CHARGING
        }

    fun toMap(): Map<String, Any?> = linkedMapOf(
        "at_ms" to atMs, "level_percent" to levelPercent, "temperature_c" to temperatureC, "voltage_mv" to voltageMv,
        "plugged" to plugged, "status" to status, "charging" to charging,
    )

    companion object {
        /** BatteryManager.BATTERY_STATUS_CHARGING. */
        const val STATUS_CHARGING = 2

        /** Level in % from EXTRA_LEVEL and EXTRA_SCALE (either missing or a scale <= 0: unknown). */
        fun levelPercent(level: Int?, scale: Int?): Double? =
            if (level == null || scale == null || scale <= 0 || level < 0) null else 100.0 * level / scale
    }
}

/**
 * The battery counters of the device. The app reads BatteryManager properties with sysfs
 * (`/sys/class/power_supply/battery/`) as the fallback; the JVM tests script the readings.
 */
interface BatterySource {
    fun sources(): CounterSources

    /** One reading of every readable counter; called on the sampling thread, so it must be quick. */
    fun read(atNs: Long): BatteryReading

    fun state(): BatteryState
}

/** What a sampled window gave: the body's result, every reading in order, and why reading stopped early. */
class Sampled<T>(val value: T, val readings: List<BatteryReading>, val error: String?)

/** Reads a battery source while [sample]'s body runs on the caller's thread. */
interface EnergySampler {
    fun <T> sample(body: () -> T): Sampled<T>
}

/**
 * The sampling loop: one reading when the window opens, then one every [periodNs] on a side thread
 * (a fixed rate that never bursts to catch up), and one when the body returns. The side thread only
 * reads counters; the body (idle wait or inference loop) runs undisturbed on the caller's thread.
 */
class ThreadSampler(private val source: BatterySource, private val clock: NanoClock, private val periodNs: Long) : EnergySampler {
    init {
        require(periodNs > 0) { "sampling period must be > 0 ns" }
    }

    override fun <T> sample(body: () -> T): Sampled<T> {
        // Filled by this thread before start() and after join(), by the sampler between: start and
        // join order the accesses, so a plain list is safe.
        val readings = ArrayList<BatteryReading>()
        var error: String? = null
        fun readInto(): Boolean = try {
            readings += source.read(clock.nanos())
            true
        } catch (e: Exception) {
            error = "${e::class.java.name}: ${firstLine(e.message)}"
            false
        }
        readInto()
        val stop = AtomicBoolean(false)
        val thread = Thread({
            var next = clock.nanos() + periodNs
            while (!stop.get() && error == null) {
                // parkNanos may return early (spuriously, or on unpark at the end): wait out the whole period.
                while (!stop.get()) {
                    val wait = next - clock.nanos()
                    if (wait <= 0) break
                    LockSupport.parkNanos(wait)
                }
                if (stop.get()) break
                if (!readInto()) break
                next += periodNs
                if (next <= clock.nanos()) next = clock.nanos() + periodNs // fell behind: skip the missed ticks
            }
        }, "nnlite-battery")
        thread.isDaemon = true
        thread.start()
        val value = try {
            body()
        } finally {
            stop.set(true)
            LockSupport.unpark(thread)
            thread.join()
        }
        if (error == null) readInto()
        return Sampled(value, readings, error)
    }
}
