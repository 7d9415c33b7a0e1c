package org.nnlite.bench.core

import java.io.File
import java.io.FileOutputStream
import java.io.IOException

/** Writes `<path>.tmp`, syncs it, then renames it to `<path>`: a reader sees no file or a whole one. */
object AtomicFile {
    fun write(path: String, text: String) {
        val target = File(path)
        target.absoluteFile.parentFile?.let { dir ->
            if (!dir.isDirectory && !dir.mkdirs() && !dir.isDirectory) throw IOException("cannot create directory $dir")
        }
        val tmp = File("$path.tmp")
        FileOutputStream(tmp).use { out ->
            out.write(text.toByteArray(Charsets.UTF_8))
            out.flush()
            out.fd.sync()
        }
        if (!tmp.renameTo(target)) {
            tmp.delete()
            throw IOException("cannot rename $tmp to $target")
        }
    }
}
