// The app's plain-Kotlin core: no Android, no LiteRT. test-core.sh compiles and tests the same
// sources with kotlinc + JUnit on machines without the Android SDK; here Gradle does it.
plugins {
    alias(libs.plugins.kotlin.jvm)
}

kotlin {
    jvmToolchain(17)
}

dependencies {
    testImplementation(platform(libs.junit.bom))
    testImplementation(libs.junit.jupiter)
    testRuntimeOnly(libs.junit.platform.launcher)
}

tasks.test {
    useJUnitPlatform()
}
