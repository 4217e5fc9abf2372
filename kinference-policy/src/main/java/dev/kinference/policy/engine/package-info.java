/**
 * The policy engine and the small API a gateway needs around it.
 *
 * <p>{@link dev.kinference.policy.engine.Governance} is the entry point, used in this order for each request:
 * <ol>
 *   <li>{@link dev.kinference.policy.engine.Governance#authenticate}: API key (Bearer or {@code x-api-key}) or
 *       tenant header to a {@link dev.kinference.policy.engine.Caller};</li>
 *   <li>{@link dev.kinference.policy.engine.Governance#reserve}: rate limits and budget, all or nothing, returning
 *       an {@link dev.kinference.policy.engine.Admission};</li>
 *   <li>{@code router.route(admission.request())}: the router consults the {@link
 *       dev.kinference.policy.engine.YamlPolicyEngine} ({@link dev.kinference.policy.engine.Governance#engine});</li>
 *   <li>{@link dev.kinference.policy.engine.Admission#settle} with the real usage (or {@code fail}, or {@code
 *       cancel} when the router refused): corrects the reservation and records the usage in {@link
 *       dev.kinference.policy.engine.Governance#accounting}.</li>
 * </ol>
 */
@NullMarked
package dev.kinference.policy.engine;

import org.jspecify.annotations.NullMarked;
