package org.nnlite.bench.core

/**
 * Energy per inference from the battery counters of an idle and a load window (PROTOCOL.md,
 * "Energy arithmetic" and "Energy validity"). Every condition that makes the figure unmeasurable is
 * a reason, never a default: the result is valid only when none applies.
 *
 * Arithmetic: the counter used is CURRENT_NOW if it changed in both windows, else CHARGE_COUNTER if
 * that changed in both. The discharge current of a window is d = s * mean(CURRENT_NOW), s the sign
 * convention detected, or -(CHARGE_COUNTER's change per hour between its first and last update);
 * power P = d * V (µA * µV / 1e9 = mW). Energy per inference = (P_load - P_idle) * T_load / N.
 */
object EnergyMath {
    const val MIN_READINGS = 10
    const val MIN_UPDATES = 5

    /** Why an energy figure is not valid, in the order they are checked. */
    val REASON_CODES = listOf(
        "counter_read_failed", "charging", "charging_unknown", "no_counter", "too_few_samples", "counter_constant",
        "no_voltage", "sign_undetermined", "noisy_idle",
    )

    class Result(
        val reasons: List<Pair<String, String>>,
        val counter: String?,
        val signConvention: String?,
        val powerIdleMw: Double?,
        val powerLoadMw: Double?,
        val idleNoiseMw: Double?,
        val energyPerInferenceMj: Double?,
        val idleVoltage: Pair<Double, String>?,
        val loadVoltage: Pair<Double, String>?,
        val charging: Boolean?,
    ) {
        val valid: Boolean get() = reasons.isEmpty()
        val powerDeltaMw: Double? get() = if (valid) powerLoadMw!! - powerIdleMw!! else null
    }

    fun evaluate(
        idle: EnergyWindow,
        load: EnergyWindow,
        inferences: Int,
        before: BatteryState,
        after: BatteryState,
        readError: String? = null,
    ): Result {
        val reasons = mutableListOf<Pair<String, String>>()
        val windows = listOf("idle" to idle, "load" to load)
        readError?.let { reasons += "counter_read_failed" to "reading the battery counters failed: $it" }

        val states = listOf(before, after)
        val charging = if (states.any { it.charging == true }) true else if (states.any { it.charging == null }) null else false
        when (charging) {
            true -> reasons += "charging" to "the device was on a charger or charging (plugged ${before.plugged}/${after.plugged}, " +
                "status ${before.status}/${after.status} before/after): the counters describe the charger, not the load"
            null -> reasons += "charging_unknown" to "whether the device was on a charger could not be read"
            false -> Unit
        }

        if (windows.all { (_, w) -> w.current.count == 0 && w.charge.count == 0 }) {
            reasons += "no_counter" to "neither CURRENT_NOW nor CHARGE_COUNTER could be read"
        }
        for ((name, w) in windows) {
            if (w.readings.size < MIN_READINGS) {
                reasons += "too_few_samples" to "only ${w.readings.size} readings in the $name window (at least $MIN_READINGS needed)"
            }
        }
        val counter = when {
            windows.all { (_, w) -> w.current.updates >= 1 } -> "current_now"
            windows.all { (_, w) -> w.charge.updates >= 1 } -> "charge_counter"
            else -> null
        }
        if (counter == null && reasons.none { it.first == "no_counter" }) {
            reasons += "counter_constant" to "no counter changed in both windows (CURRENT_NOW updates ${idle.current.updates} idle, " +
                "${load.current.updates} load; CHARGE_COUNTER ${idle.charge.updates} idle, ${load.charge.updates} load)"
        }
        if (counter != null) {
            for ((name, w) in windows) {
                val updates = if (counter == "current_now") w.current.updates else w.charge.updates
                if (updates < MIN_UPDATES) {
                    reasons += "too_few_samples" to "$counter changed only $updates times in the $name window (at least $MIN_UPDATES needed)"
                }
            }
        }

        val idleV = idle.voltageUv(states)
        val loadV = load.voltageUv(states)
        if (idleV == null || loadV == null) reasons += "no_voltage" to "no battery voltage could be read"

        var sign: String? = null
        var dIdle: Double? = null
        var dLoad: Double? = null
        var noiseUa: Double? = null
        if (counter == "current_now") {
            val mi = idle.current.holdMean
            val ml = load.current.holdMean
            if (mi != null && ml != null) {
                // Discharge is the direction both windows share: AOSP documents negative (current leaving
                // the battery), some vendors report it positive. Opposite signs mean one window charged.
                val s = when {
                    mi < 0 && ml < 0 -> -1.0
                    mi > 0 && ml > 0 -> 1.0
                    else -> null
                }
                if (s == null) {
                    reasons += "sign_undetermined" to "CURRENT_NOW averaged $mi µA idle and $ml µA under load: not one sign, " +
                        "so which way is discharge cannot be told"
                } else {
                    // On a charger the shared sign is the charger's, not a vendor's discharge convention.
                    sign = if (charging != false) null else if (s < 0) "discharge_negative" else "discharge_positive"
                    dIdle = s * mi
                    dLoad = s * ml
                    noiseUa = idle.current.holdStd
                }
            }
        } else if (counter == "charge_counter") {
            val ri = idle.charge.ratePerHour
            val rl = load.charge.ratePerHour
            if (ri != null && rl != null) {
                // A charge counter is a level: it falls while the battery discharges, whatever the vendor.
                for ((name, r) in listOf("idle" to ri, "load" to rl)) {
                    if (r >= 0) reasons += "sign_undetermined" to "CHARGE_COUNTER did not fall during the $name window ($r µAh per hour)"
                }
                dIdle = -ri
                dLoad = -rl
                // One step of the counter over the idle span: the resolution of the idle figure.
                noiseUa = idle.charge.smallestStep!!.toDouble() * CounterSeries.NS_PER_HOUR / idle.charge.updateSpanNs!!.toDouble()
            }
        }

        val measurable = reasons.isEmpty() && dIdle != null && dLoad != null && idleV != null && loadV != null
        val pIdle = if (measurable) dIdle * idleV.first / 1e9 else null
        val pLoad = if (measurable) dLoad * loadV.first / 1e9 else null
        val noise = if (measurable) noiseUa!! * idleV.first / 1e9 else null
        if (measurable && pLoad!! - pIdle!! <= noise!!) {
            reasons += "noisy_idle" to "the load drew ${pLoad - pIdle} mW more than idle, not more than the idle window's " +
                "noise of $noise mW"
        }
        val energy = if (reasons.isEmpty()) (pLoad!! - pIdle!!) * (load.durationNs / 1e9) / inferences else null
        return Result(reasons, counter, sign, pIdle, pLoad, noise, energy, idleV, loadV, charging)
    }
}
