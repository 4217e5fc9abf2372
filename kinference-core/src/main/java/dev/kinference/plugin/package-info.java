/**
 * Plugin discovery: every extension point ({@code Scorer}, {@code Filter}, {@code Picker}, {@code CacheIndex},
 * {@code Tokenizer}, {@code EndpointSource}, {@code PolicyEngine}) is a {@link dev.kinference.plugin.Plugin} found
 * with {@link java.util.ServiceLoader} by {@link dev.kinference.plugin.Plugins}.
 *
 * <h2>Order</h2>
 * Providers are ordered by {@link dev.kinference.plugin.Plugin#order()} (lower first), then by
 * {@link dev.kinference.plugin.Plugin#name()}, then by class name, so the order never depends on the class path.
 * When two providers share a name, the first in that order is used and the other is reported as shadowed: to
 * replace a built-in, give your provider the built-in's name and an {@code order()} below 0. A caller selects a
 * provider by name.
 *
 * <h2>Failures</h2>
 * A provider that cannot be loaded or instantiated is logged, recorded in
 * {@link dev.kinference.plugin.PluginSet#failures()} and skipped; it never prevents the others from loading.
 */
@NullMarked
package dev.kinference.plugin;

import org.jspecify.annotations.NullMarked;
