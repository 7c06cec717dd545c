# GS_CHECK_CUNIT
# --------------
# CUnit for the unit-test suites: pkg-config's cunit, else the header and
# library on the default paths (CPPFLAGS/LDFLAGS). Optional: without it
# `make check` runs only the script tests, and configure says so.
AC_DEFUN([GS_CHECK_CUNIT], [
  gs_cunit_ok=no
  m4_ifdef([PKG_CHECK_MODULES],
    [PKG_CHECK_MODULES([CUNIT], [cunit], [gs_cunit_ok=yes], [:])])
  if test "x$gs_cunit_ok" = xno; then
    gs_save_LIBS=$LIBS
    AC_CHECK_HEADER([CUnit/Basic.h],
      [AC_CHECK_LIB([cunit], [CU_initialize_registry],
        [gs_cunit_ok=yes; CUNIT_CFLAGS=; CUNIT_LIBS=-lcunit])])
    LIBS=$gs_save_LIBS
  fi
  if test "x$gs_cunit_ok" = xno; then
    AC_MSG_WARN([CUnit not found: make check will skip the unit-test suites (Debian: apt-get install libcunit1-dev)])
  fi
  AM_CONDITIONAL([HAVE_CUNIT], [test "x$gs_cunit_ok" = xyes])
  AC_SUBST([CUNIT_CFLAGS])
  AC_SUBST([CUNIT_LIBS])
])
