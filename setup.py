"""Builds convgrad._convgrad with CMake for `pip install --no-build-isolation .` (see
pyproject.toml and docs/python.md): the library and the module only, for the running
interpreter, then copies the module into the wheel."""
import os
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        root = os.path.dirname(os.path.abspath(__file__))
        build = os.path.abspath(os.path.join(self.build_temp, "cmake"))
        subprocess.check_call([
            "cmake", "-S", root, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
            "-DCONVGRAD_BUILD_TESTS=OFF", "-DCONVGRAD_BUILD_TOOLS=OFF",
            "-DCONVGRAD_BUILD_BENCH=OFF", "-DCONVGRAD_BUILD_EXAMPLES=OFF",
            "-DCONVGRAD_BUILD_PYTHON=ON", f"-DCONVGRAD_PYTHON={sys.executable}"])
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", "2")
        subprocess.check_call(["cmake", "--build", build, "--target", "convgrad_python", "-j", jobs])
        built = os.path.join(build, "python", "convgrad", self.get_ext_filename("_convgrad"))
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        self.copy_file(built, target)


setup(ext_modules=[CMakeExtension("convgrad._convgrad")], cmdclass={"build_ext": CMakeBuild})
