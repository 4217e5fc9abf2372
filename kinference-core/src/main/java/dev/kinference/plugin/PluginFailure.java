package dev.kinference.plugin;

/**
 * A provider that was skipped.
 *
 * @param service the service interface
 * @param provider the provider class name, or {@code "?"} when the failure happened before it was known
 * @param reason why it was skipped
 */
public record PluginFailure(Class<?> service, String provider, String reason) {}
