pluginManagement {
    repositories {
        google()
        mavenCentral()
        gradlePluginPortal()
    }
}

dependencyResolutionManagement {
    repositoriesMode.set(RepositoriesMode.FAIL_ON_PROJECT_REPOS)
    repositories {
        google() // LiteRT is published to Google's Maven repository only
        mavenCentral()
    }
}

rootProject.name = "nnlite-bench"
include(":core", ":app")
