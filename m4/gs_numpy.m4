# GS_CHECK_NUMPY
# --------------
# A python3 that imports NumPy, for the CLI tests that compare with NumPy
# (the first of $PYTHON3, python3 on PATH, /usr/bin/python3). Optional: the
# tests that need it skip without it. Substitutes PYTHON3.
AC_DEFUN([GS_CHECK_NUMPY], [
  AC_ARG_VAR([PYTHON3], [python3 with NumPy for the tests])
  AC_MSG_CHECKING([for a python3 with NumPy])
  gs_numpy_python=
  for p in "$PYTHON3" python3 /usr/bin/python3; do
    AS_IF([test -n "$p" && "$p" -c 'import numpy' >/dev/null 2>&1],
      [gs_numpy_python=`command -v "$p"`; break])
  done
  PYTHON3=$gs_numpy_python
  AC_MSG_RESULT([${PYTHON3:-no (the NumPy comparisons will skip)}])
  GS_NUMPY_SUMMARY=${PYTHON3:-no (the NumPy comparisons skip)}
])
