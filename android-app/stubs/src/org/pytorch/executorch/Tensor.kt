// Signature stub of ExecuTorch's Android API (org.pytorch:executorch-android 1.5); see Module.kt here.
package org.pytorch.executorch

import java.nio.Buffer
import java.nio.ByteBuffer
import java.nio.DoubleBuffer
import java.nio.FloatBuffer
import java.nio.IntBuffer
import java.nio.LongBuffer
import java.nio.ShortBuffer

abstract class Tensor internal constructor(shape: LongArray) {
    @JvmField protected val shape: LongArray = shape.copyOf()

    fun numel(): Long = stub()

    fun shape(): LongArray = stub()

    abstract fun dtype(): DType

    fun dtypeJniCode(): Int = stub()

    open val dataAsByteArray: ByteArray get() = stub()
    open val dataAsShortArray: ShortArray get() = stub()
    open val dataAsUnsignedByteArray: ByteArray get() = stub()
    open val dataAsIntArray: IntArray get() = stub()
    open val dataAsFloatArray: FloatArray get() = stub()
    open val dataAsLongArray: LongArray get() = stub()
    open val dataAsDoubleArray: DoubleArray get() = stub()

    open fun copyDataInto(dst: FloatBuffer): Unit = stub()

    open fun copyDataInto(dst: ByteBuffer): Unit = stub()

    open fun copyDataIntoUnsigned(dst: ByteBuffer): Unit = stub()

    open fun copyDataInto(dst: IntBuffer): Unit = stub()

    open fun copyDataInto(dst: LongBuffer): Unit = stub()

    open fun copyDataInto(dst: DoubleBuffer): Unit = stub()

    open fun copyDataInto(dst: ShortBuffer): Unit = stub()

    open fun getRawDataBuffer(): Buffer = stub()

    fun toByteArray(): ByteArray = stub()

    companion object {
        @JvmStatic fun allocateByteBuffer(numElements: Int): ByteBuffer = stub()

        @JvmStatic fun allocateIntBuffer(numElements: Int): IntBuffer = stub()

        @JvmStatic fun allocateFloatBuffer(numElements: Int): FloatBuffer = stub()

        @JvmStatic fun allocateLongBuffer(numElements: Int): LongBuffer = stub()

        @JvmStatic fun allocateHalfBuffer(numElements: Int): ShortBuffer = stub()

        @JvmStatic fun allocateDoubleBuffer(numElements: Int): DoubleBuffer = stub()

        @JvmStatic fun fromBlobUnsigned(data: ByteArray, shape: LongArray): Tensor = stub()

        @JvmStatic fun fromBlob(data: ByteArray, shape: LongArray): Tensor = stub()

        @JvmStatic fun fromBlob(data: IntArray, shape: LongArray): Tensor = stub()

        @JvmStatic fun fromBlob(data: FloatArray, shape: LongArray): Tensor = stub()

        @JvmStatic fun fromBlob(data: ShortArray, shape: LongArray): Tensor = stub()

        @JvmStatic fun fromBlob(data: LongArray, shape: LongArray): Tensor = stub()

        @JvmStatic fun fromBlob(data: DoubleArray, shape: LongArray): Tensor = stub()

        @JvmStatic fun fromBlobUnsigned(data: ByteBuffer, shape: LongArray): Tensor = stub()

        @JvmStatic fun fromBlob(data: ByteBuffer, shape: LongArray): Tensor = stub()

        @JvmStatic fun fromBlob(data: IntBuffer, shape: LongArray): Tensor = stub()

        @JvmStatic fun fromBlob(data: FloatBuffer, shape: LongArray): Tensor = stub()

        @JvmStatic fun fromBlob(data: ShortBuffer, shape: LongArray): Tensor = stub()

        @JvmStatic fun fromBlob(data: LongBuffer, shape: LongArray): Tensor = stub()

        @JvmStatic fun fromBlob(data: DoubleBuffer, shape: LongArray): Tensor = stub()

        @JvmStatic fun ones(shape: LongArray, dtype: DType): Tensor = stub()

        @JvmStatic fun zeros(shape: LongArray, dtype: DType): Tensor = stub()

        @JvmStatic fun numel(shape: LongArray): Long = stub()

        @JvmStatic fun fromByteArray(bytes: ByteArray): Tensor = stub()
    }
}
