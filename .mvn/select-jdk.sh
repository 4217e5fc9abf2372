# Sourced (POSIX sh) by ./mvnw, ./kinference and .ci/run.
# The project needs a JDK >= 21. When JAVA_HOME (or the java on PATH) is older, look for a newer
# JDK in the usual install locations and export JAVA_HOME to it, so that a fresh machine whose
# default Java is 17 still builds with the README's command. An explicit JAVA_HOME >= 21 wins.
kinference_java_feature() {
  # prints the feature release (17, 21, 25...) of the java binary $1, or 0
  "$1" -XshowSettings:properties -version 2>&1 \
    | sed -n 's/^ *java\.specification\.version = \([0-9][0-9]*\).*/\1/p' | head -n 1 | grep . || echo 0
}
kinference_select_jdk() {
  kinference_current=""
  if [ -n "${JAVA_HOME-}" ] && [ -x "$JAVA_HOME/bin/java" ]; then
    kinference_current="$JAVA_HOME/bin/java"
  elif command -v java >/dev/null 2>&1; then
    kinference_current="$(command -v java)"
  fi
  if [ -n "$kinference_current" ] && [ "$(kinference_java_feature "$kinference_current")" -ge 21 ]; then
    return 0
  fi
  kinference_best=""
  kinference_best_feature=0
  # callers such as mvnw run under 'set -f'; the search below needs globbing
  case $- in *f*) kinference_noglob=true; set +f ;; *) kinference_noglob=false ;; esac
  for kinference_home in /usr/lib/jvm/* /opt/java/* /opt/jdk* /usr/local/lib/jvm/* "$HOME"/.sdkman/candidates/java/*; do
    [ -x "$kinference_home/bin/javac" ] || continue
    kinference_feature="$(kinference_java_feature "$kinference_home/bin/java")"
    if [ "$kinference_feature" -ge 21 ] && [ "$kinference_feature" -gt "$kinference_best_feature" ]; then
      kinference_best="$kinference_home"
      kinference_best_feature="$kinference_feature"
    fi
  done
  [ "$kinference_noglob" = false ] || set -f
  if [ -n "$kinference_best" ]; then
    JAVA_HOME="$kinference_best"
    export JAVA_HOME
    [ "${KINFERENCE_QUIET_JDK-}" = true ] || echo "kinference: using JDK $kinference_best_feature at $JAVA_HOME (Java 21+ is required)" >&2
  else
    echo "kinference: Java 21 or newer is required; set JAVA_HOME to a JDK >= 21" >&2
  fi
}
kinference_select_jdk
