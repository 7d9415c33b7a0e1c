package org.nnlite.bench

import android.os.Build
import android.util.Log
import org.nnlite.bench.core.BenchLog
import org.nnlite.bench.core.DeviceInfo

const val TAG = "NNLiteBench"

/** The report's `device` block, read from android.os.Build (SoC fields exist from API 31). */
fun deviceInfo(): DeviceInfo = DeviceInfo(
    manufacturer = Build.MANUFACTURER,
    model = Build.MODEL,
    brand = Build.BRAND,
    device = Build.DEVICE,
    product = Build.PRODUCT,
    board = Build.BOARD,
    hardware = Build.HARDWARE,
    socManufacturer = if (Build.VERSION.SDK_INT >= Build.VERSION_CODES.S) Build.SOC_MANUFACTURER else null,
    socModel = if (Build.VERSION.SDK_INT >= Build.VERSION_CODES.S) Build.SOC_MODEL else null,
    abis = Build.SUPPORTED_ABIS.toList(),
    sdkInt = Build.VERSION.SDK_INT,
    release = Build.VERSION.RELEASE,
    buildId = Build.ID,
    fingerprint = Build.FINGERPRINT,
)

/** The core's log lines, to logcat under tag NNLiteBench. */
object LogcatLog : BenchLog {
    override fun info(message: String) {
        Log.i(TAG, message)
    }

    override fun error(message: String, error: Throwable?) {
        if (error != null) Log.e(TAG, message, error) else Log.e(TAG, message)
    }
}
