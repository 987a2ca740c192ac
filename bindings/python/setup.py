"""setup.py - the Python package percept, built against an installed
percept: pkg-config's flags for it when pkg-config knows it, else
-lpercept where the compiler finds it.

    python3 -m venv --system-site-packages env
    env/bin/pip install ./bindings/python

No pyproject.toml: with one, pip would build in an isolated environment
and fetch setuptools from the network; without, it uses the one it has.
"""
import shlex
import subprocess

from setuptools import Extension, setup


def pkg_config(option):
    """pkg-config's words for percept, or None without pkg-config or percept.pc."""
    try:
        run = subprocess.run(["pkg-config", option, "percept"], capture_output=True,
                             text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return shlex.split(run.stdout)


def extension():
    cflags, libs = pkg_config("--cflags"), pkg_config("--libs")
    if cflags is None or libs is None:
        return Extension("percept._percept", ["percept/_percept.c"], libraries=["percept"])
    lib_dirs = [w[2:] for w in libs if w.startswith("-L")]
    return Extension(
        "percept._percept",
        ["percept/_percept.c"],
        include_dirs=[w[2:] for w in cflags if w.startswith("-I")],
        extra_compile_args=[w for w in cflags if not w.startswith("-I")],
        library_dirs=lib_dirs,
        # An installation outside the linker's paths is found without
        # LD_LIBRARY_PATH.
        runtime_library_dirs=lib_dirs,
        libraries=[w[2:] for w in libs if w.startswith("-l")],
        extra_link_args=[w for w in libs if not w.startswith(("-L", "-l"))],
    )


setup(
    name="percept",
    version="0.4.0",
    description="Who perceives whom, by which sense: percept's perception "
                "(area-of-interest) library for game servers",
    packages=["percept"],
    ext_modules=[extension()],
    python_requires=">=3.8",
    install_requires=["numpy"],
)
