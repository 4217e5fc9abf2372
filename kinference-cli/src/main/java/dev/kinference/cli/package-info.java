/** The {@code kinference} command line: one executable jar, a picocli subcommand per task. */
@NullMarked
package dev.kinference.cli;

import org.jspecify.annotations.NullMarked;
