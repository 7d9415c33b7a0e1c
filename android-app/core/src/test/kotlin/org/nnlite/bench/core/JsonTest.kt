package org.nnlite.bench.core

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Test

class JsonTest {
    @Test
    fun `values survive a write and parse round trip`() {
        val value = linkedMapOf(
            "s" to "quote \" backslash \\ newline \n tab \t ctrl \u0001 é",
            "i" to 42L, "neg" to -7L, "d" to 0.1, "big" to 1.5e9, "tiny" to 4.9e-324,
            "t" to true, "f" to false, "n" to null,
            "list" to listOf(1L, 2L, 3L), "nested" to linkedMapOf("shape" to listOf(listOf(1L, 3L)), "empty" to emptyList<Any>()),
        )
        for (indent in listOf(0, 2)) assertEquals(value, Json.parse(Json.write(value, indent)))
    }

    @Test
    fun `doubles round-trip bit for bit`() {
        val xs = listOf(1.0 / 3, 2.0 / 3 * 1e9, 123456789.123456789, Math.PI * 1e-12)
        for (x in xs) assertEquals(x, Json.parse(Json.write(x)))
    }

    @Test
    fun `non-finite numbers and junk are refused`() {
        assertThrows(IllegalArgumentException::class.java) { Json.write(Double.NaN) }
        assertThrows(IllegalArgumentException::class.java) { Json.write(listOf(Double.POSITIVE_INFINITY)) }
        assertThrows(IllegalArgumentException::class.java) { Json.parse("{\"a\": 1,}") }
        assertThrows(IllegalArgumentException::class.java) { Json.parse("[1] x") }
    }
}
