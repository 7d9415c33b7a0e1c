package org.nnlite.bench.core

/**
 * Minimal JSON for the report (no org.json: that is Android-only, and the core must run on a
 * plain JVM). Writes Map/List/String/Number/Boolean/null; parses the same back.
 * Integers stay Long, fractions become Double; non-finite numbers are rejected (JSON has none).
 */
object Json {
    fun write(value: Any?, indent: Int = 2): String = StringBuilder().also { emit(it, value, indent, 0) }.toString()

    private fun emit(out: StringBuilder, value: Any?, indent: Int, depth: Int) {
        when (value) {
            null -> out.append("null")
            is String -> quote(out, value)
            is Boolean -> out.append(value)
            is Int, is Long, is Short, is Byte -> out.append(value.toString())
            is Double -> number(out, value)
            is Float -> number(out, value.toString().toDouble())
            is Map<*, *> -> container(out, '{', '}', value.entries.toList(), indent, depth) { e ->
                quote(out, e.key as? String ?: throw IllegalArgumentException("JSON key not a string: ${e.key}"))
                out.append(if (indent > 0) ": " else ":")
                emit(out, e.value, indent, depth + 1)
            }
            is Iterable<*> -> container(out, '[', ']', value.toList(), indent, depth) { emit(out, it, indent, depth + 1) }
            is LongArray -> emit(out, value.asList(), indent, depth)
            is IntArray -> emit(out, value.asList(), indent, depth)
            is Array<*> -> emit(out, value.asList(), indent, depth)
            else -> throw IllegalArgumentException("cannot write ${value::class.java.name} as JSON")
        }
    }

    private fun <T> container(
        out: StringBuilder, open: Char, close: Char, items: List<T>, indent: Int, depth: Int, item: (T) -> Unit,
    ) {
        out.append(open)
        if (items.isEmpty()) { out.append(close); return }
        // Short lists of scalars (shapes, dtypes, samples) stay on one line to keep reports readable.
        val flat = indent == 0 || items.all { it !is Map<*, *> && it !is Iterable<*> && it !is Map.Entry<*, *> }
        items.forEachIndexed { i, v ->
            if (i > 0) out.append(if (flat && indent > 0) ", " else ",")
            if (!flat) out.append('\n').append(" ".repeat(indent * (depth + 1)))
            item(v)
        }
        if (!flat) out.append('\n').append(" ".repeat(indent * depth))
        out.append(close)
    }

    private fun number(out: StringBuilder, d: Double) {
        require(d.isFinite()) { "JSON cannot hold $d" }
        out.append(d.toString()) // Java's Double.toString round-trips exactly; "1.0E9" is valid JSON
    }

    private fun quote(out: StringBuilder, s: String) {
        out.append('"')
        for (c in s) {
            when (c) {
                '"' -> out.append("\\\"")
                '\\' -> out.append("\\\\")
                '\n' -> out.append("\\n")
                '\r' -> out.append("\\r")
                '\t' -> out.append("\\t")
                else -> if (c < ' ') out.append(String.format("\\u%04x", c.code)) else out.append(c)
            }
        }
        out.append('"')
    }

    fun parse(text: String): Any? {
        val p = Parser(text)
        val v = p.value()
        p.skipWs()
        if (p.pos != text.length) p.fail("trailing characters")
        return v
    }

    private class Parser(val s: String) {
        var pos = 0

        fun fail(msg: String): Nothing = throw IllegalArgumentException("JSON: $msg at offset $pos")

        fun skipWs() { while (pos < s.length && s[pos] in " \t\r\n") pos++ }

        fun value(): Any? {
            skipWs()
            if (pos >= s.length) fail("unexpected end")
            return when (s[pos]) {
                '{' -> obj()
                '[' -> arr()
                '"' -> str()
                't' -> literal("true", true)
                'f' -> literal("false", false)
                'n' -> literal("null", null)
                else -> num()
            }
        }

        fun literal(word: String, v: Any?): Any? {
            if (!s.startsWith(word, pos)) fail("bad literal")
            pos += word.length
            return v
        }

        fun obj(): Map<String, Any?> {
            val m = LinkedHashMap<String, Any?>()
            pos++
            skipWs()
            if (s.getOrNull(pos) == '}') { pos++; return m }
            while (true) {
                skipWs()
                if (s.getOrNull(pos) != '"') fail("expected key")
                val k = str()
                skipWs()
                if (s.getOrNull(pos) != ':') fail("expected ':'")
                pos++
                m[k] = value()
                skipWs()
                when (s.getOrNull(pos)) {
                    ',' -> pos++
                    '}' -> { pos++; return m }
                    else -> fail("expected ',' or '}'")
                }
            }
        }

        fun arr(): List<Any?> {
            val l = ArrayList<Any?>()
            pos++
            skipWs()
            if (s.getOrNull(pos) == ']') { pos++; return l }
            while (true) {
                l.add(value())
                skipWs()
                when (s.getOrNull(pos)) {
                    ',' -> pos++
                    ']' -> { pos++; return l }
                    else -> fail("expected ',' or ']'")
                }
            }
        }

        fun str(): String {
            val b = StringBuilder()
            pos++
            while (true) {
                if (pos >= s.length) fail("unterminated string")
                val c = s[pos++]
                when (c) {
                    '"' -> return b.toString()
                    '\\' -> {
                        val e = s.getOrNull(pos++) ?: fail("bad escape")
                        when (e) {
                            '"', '\\', '/' -> b.append(e)
                            'b' -> b.append('\b')
                            'f' -> b.append('\u000c')
                            'n' -> b.append('\n')
                            'r' -> b.append('\r')
                            't' -> b.append('\t')
                            'u' -> {
                                if (pos + 4 > s.length) fail("bad \\u escape")
                                b.append(s.substring(pos, pos + 4).toInt(16).toChar())
                                pos += 4
                            }
                            else -> fail("bad escape")
                        }
                    }
                    else -> b.append(c)
                }
            }
        }

        fun num(): Any {
            val start = pos
            while (pos < s.length && s[pos] in "+-0123456789.eE") pos++
            val t = s.substring(start, pos)
            if (t.isEmpty()) fail("unexpected character")
            return if (t.any { it in ".eE" }) t.toDouble() else t.toLongOrNull() ?: t.toDouble()
        }
    }
}
