/**
 * The compatibility test kit: extend {@link dev.kinference.testkit.ScorerContract},
 * {@link dev.kinference.testkit.CacheIndexContract} or {@link dev.kinference.testkit.EndpointSourceContract} in your
 * plugin's tests and implement the factory method; the inherited tests state the SPI's contract. Every built-in
 * passes them.
 */
@NullMarked
package dev.kinference.testkit;

import org.jspecify.annotations.NullMarked;
