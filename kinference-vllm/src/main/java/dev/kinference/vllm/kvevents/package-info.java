/**
 * vLLM's KV-cache events over ZeroMQ: {@link dev.kinference.vllm.kvevents.KvEventDecoder} turns a message's msgpack
 * payload into {@link dev.kinference.cache.KvEvent}s; {@link dev.kinference.vllm.kvevents.KvEventSubscriber}
 * subscribes to one server (or one data-parallel rank) and applies the events to a
 * {@link dev.kinference.cache.CacheIndex} in order, following the rules of {@code KvEventSequencer} (gaps repaired
 * through the replay socket, restarts detected, silences checked), which sees no socket;
 * {@link dev.kinference.vllm.kvevents.KvEventSubscriptions} keeps one subscriber per fleet member.
 */
@NullMarked
package dev.kinference.vllm.kvevents;

import org.jspecify.annotations.NullMarked;
