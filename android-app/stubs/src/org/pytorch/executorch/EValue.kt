// Signature stub of ExecuTorch's Android API (org.pytorch:executorch-android 1.5); see Module.kt here.
package org.pytorch.executorch

class EValue private constructor(@JvmField val mTypeCode: Int) {
    @JvmField var mData: Any? = null

    val isNone: Boolean get() = stub()
    val isTensor: Boolean get() = stub()
    val isBool: Boolean get() = stub()
    val isInt: Boolean get() = stub()
    val isDouble: Boolean get() = stub()
    val isString: Boolean get() = stub()

    fun toTensor(): Tensor = stub()

    fun toBool(): Boolean = stub()

    fun toInt(): Long = stub()

    fun toDouble(): Double = stub()

    fun toStr(): String = stub()

    fun toByteArray(): ByteArray = stub()

    companion object {
        @JvmStatic fun optionalNone(): EValue = stub()

        @JvmStatic fun from(tensor: Tensor): EValue = stub()

        @JvmStatic fun from(value: Boolean): EValue = stub()

        @JvmStatic fun from(value: Long): EValue = stub()

        @JvmStatic fun from(value: Double): EValue = stub()

        @JvmStatic fun from(value: String): EValue = stub()

        @JvmStatic fun fromByteArray(bytes: ByteArray): EValue = stub()
    }
}
