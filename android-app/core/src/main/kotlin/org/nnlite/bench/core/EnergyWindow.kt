package org.nnlite.bench.core

/**
 * The non-null values of one counter in a window, in reading order, with their times (ns). The
 * formulas (PROTOCOL.md, "Energy arithmetic") are the ones the simulator and the host reproduce:
 * products in double, sums exactly rounded (Stats.fsum = Python's math.fsum).
 */
class CounterSeries(private val times: LongArray, private val values: LongArray) {
    val count: Int get() = values.size

    /** Readings whose value differs from the previous reading of this counter (the counter's updates). */
    private val updateIndices: List<Int> = (1 until values.size).filter { values[it] != values[it - 1] }

    val updates: Int get() = updateIndices.size

    private val span: Long get() = if (count < 2) 0 else times[count - 1] - times[0]

    /**
     * Time-weighted mean, each value held until the next reading:
     * sum(x_j * (t_{j+1} - t_j), j < m-1) / (t_{m-1} - t_0). Null with fewer than 2 readings or no span.
     */
    val holdMean: Double?
        get() {
            if (span <= 0) return null
            return Stats.fsum(DoubleArray(count - 1) { values[it].toDouble() * (times[it + 1] - times[it]).toDouble() }) / span.toDouble()
        }

    /** Population standard deviation with the same hold weights as [holdMean]. */
    val holdStd: Double?
        get() {
            val mean = holdMean ?: return null
            val variance = Stats.fsum(DoubleArray(count - 1) {
                val d = values[it].toDouble() - mean
                d * d * (times[it + 1] - times[it]).toDouble()
            }) / span.toDouble()
            return Math.sqrt(variance)
        }

    /** Plain mean of the values (used for the voltage when there is no span to weight by). */
    val plainMean: Double? get() = if (count == 0) null else Stats.fsum(DoubleArray(count) { values[it].toDouble() }) / count

    /**
     * Change per hour between the first and the last update, (x_b - x_a) * 3.6e12 / (t_b - t_a): for a
     * charge counter in µAh, a current in µA. Measured between updates because a coarse counter's value
     * is exact only at the moment it steps. Null with fewer than 2 updates or no time between them.
     */
    val ratePerHour: Double?
        get() {
            val ns = updateSpanNs ?: return null
            return (values[updateIndices.last()] - values[updateIndices.first()]).toDouble() * NS_PER_HOUR / ns.toDouble()
        }

    /** Nanoseconds between the first and the last update; null with fewer than 2 updates or none between them. */
    val updateSpanNs: Long?
        get() {
            if (updates < 2) return null
            val ns = times[updateIndices.last()] - times[updateIndices.first()]
            return if (ns <= 0) null else ns
        }

    /** The smallest change at an update: the counter's resolution as far as this window shows it. */
    val smallestStep: Long? get() = updateIndices.minOfOrNull { Math.abs(values[it] - values[it - 1]) }

    companion object {
        const val NS_PER_HOUR = 3.6e12

        fun of(readings: List<BatteryReading>, value: (BatteryReading) -> Long?): CounterSeries {
            val points = readings.mapNotNull { r -> value(r)?.let { r.atNs to it } }
            return CounterSeries(LongArray(points.size) { points[it].first }, LongArray(points.size) { points[it].second })
        }
    }
}

/** One window (idle or load): its readings, their rate, and each counter's series. */
class EnergyWindow(val readings: List<BatteryReading>, val durationNs: Long) {
    val current = CounterSeries.of(readings) { it.currentUa }
    val charge = CounterSeries.of(readings) { it.chargeUah }
    val voltage = CounterSeries.of(readings) { it.voltageUv }

    private val spanNs: Long get() = if (readings.size < 2) 0 else readings.last().atNs - readings.first().atNs

    /** Readings per second over the window's span, (n - 1) / span; null without a span. */
    val rateHz: Double? get() = if (spanNs <= 0) null else (readings.size - 1) * 1e9 / spanNs

    /**
     * The window's voltage in µV: the hold mean of its voltage readings; with no span to weight by, their
     * plain mean; without any, the mean of the broadcast's EXTRA_VOLTAGE (mV) before and after [states].
     */
    fun voltageUv(states: List<BatteryState>): Pair<Double, String>? {
        (voltage.holdMean ?: voltage.plainMean)?.let { return it to "readings" }
        val mv = states.mapNotNull { it.voltageMv }
        return if (mv.isEmpty()) null else Stats.fsum(DoubleArray(mv.size) { mv[it] * 1000.0 }) / mv.size to "battery broadcast"
    }

    /** The report's window block: counts, rate, raw means (with the device's sign), and every reading. */
    fun toMap(voltage: Pair<Double, String>?): LinkedHashMap<String, Any?> {
        val t0 = readings.firstOrNull()?.atNs ?: 0L
        return linkedMapOf(
            "seconds" to durationNs / 1e9,
            "readings" to readings.size,
            "rate_hz" to rateHz,
            "current_updates" to current.updates,
            "charge_updates" to charge.updates,
            "mean_current_ua" to current.holdMean,
            "charge_rate_ua" to charge.ratePerHour,
            "mean_voltage_uv" to voltage?.first,
            "voltage_from" to voltage?.second,
            "samples" to linkedMapOf(
                "t_ns" to readings.map { it.atNs - t0 },
                "current_ua" to readings.map { it.currentUa },
                "charge_uah" to readings.map { it.chargeUah },
                "voltage_uv" to readings.map { it.voltageUv },
            ),
        )
    }
}
