#!/usr/bin/env python3
"""CMakePresets.json: CMake itself reads it (cmake --list-presets, in the source folder), it has
the four presets the scripts and docs name (default, release, gpu-static, asan) with the settings
their names promise, and every `--preset NAME` in scripts/, ci/ and README.md names one of them.

usage: presets_test.py SOURCE_DIR"""
import json
import os
import re
import subprocess
import sys
import unittest

SOURCE = os.path.abspath(sys.argv[1])


def read(rel):
    with open(os.path.join(SOURCE, rel)) as f:
        return f.read()


class Presets(unittest.TestCase):
    def setUp(self):
        self.doc = json.loads(read("CMakePresets.json"))
        self.configure = {p["name"]: p for p in self.doc["configurePresets"]}

    def test_cmake_reads_it(self):
        p = subprocess.run(["cmake", "--list-presets=all"], cwd=SOURCE, capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        for name in ("default", "release", "gpu-static", "asan"):
            self.assertIn('"%s"' % name, p.stdout)

    def test_each_preset_sets_what_its_name_says(self):
        cache = {n: p.get("cacheVariables", {}) for n, p in self.configure.items()}
        self.assertEqual(cache["default"]["PFX_WERROR"], "ON")  # the README's test command builds with -Werror
        self.assertEqual(cache["release"]["CMAKE_BUILD_TYPE"], "Release")
        self.assertEqual(cache["gpu-static"]["PFX_STATIC_RUNTIME"], "ON")
        self.assertEqual(cache["asan"]["PFX_SANITIZE"], "ON")
        for n, p in self.configure.items():
            self.assertTrue(p["binaryDir"].startswith("${sourceDir}/build"), n + ": build folders are ignored (/build*/)")
        for kind in ("buildPresets", "testPresets"):
            for p in self.doc.get(kind, []):
                self.assertIn(p["configurePreset"], self.configure, p["name"])

    def test_every_preset_named_in_scripts_and_docs_exists(self):
        named = set()
        for folder in ("scripts", "scripts/gpu", "ci"):
            for f in os.listdir(os.path.join(SOURCE, folder)):
                if f.endswith((".sh", ".py", ".yml")):
                    named |= set(re.findall(r"--preset[ =]([\w-]+)", read(os.path.join(folder, f))))
        named |= set(re.findall(r"--preset[ =]([\w-]+)", read("README.md")))
        self.assertTrue({"default", "release"} <= named, named)
        self.assertEqual(named - set(self.configure), set())


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
