/** A custom scorer plugin. */
@NullMarked
package dev.kinference.examples.customscorer;

import org.jspecify.annotations.NullMarked;
