/** A plain main that embeds the router. */
@NullMarked
package dev.kinference.examples.embedded;

import org.jspecify.annotations.NullMarked;
