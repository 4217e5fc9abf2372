package dev.kinference.request;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class PromptRetentionHintsTest {

  private final RequestParser parser = RequestParser.defaults();

  private PromptRetention anthropic(String body) throws InvalidRequestException {
    PromptRetention r = parser.parse(ApiFormat.ANTHROPIC_MESSAGES, body).promptRetention();
    assertThat(r).isNotNull();
    return r;
  }

  @Test
  void aOneHourBreakpointOnTheSystemPromptCoversTheSystemPromptsShare() throws Exception {
    PromptRetention r = anthropic("""
        {"model":"m","max_tokens":10,
         "system":[{"type":"text","text":"%s","cache_control":{"type":"ephemeral","ttl":"1h"}}],
         "messages":[{"role":"user","content":"%s"}]}""".formatted("s".repeat(300), "u".repeat(100)));
    assertThat(r.ttl()).isEqualTo(Duration.ofHours(1));
    assertThat(r.prefixShare()).isEqualTo(0.75);
    assertThat(r.coveredBlocks(8)).isEqualTo(6);
  }

  @Test
  void theLongestTtlWinsAndOfItsBreakpointsTheLast() throws Exception {
    PromptRetention r = anthropic("""
        {"model":"m","max_tokens":10,
         "tools":[{"name":"t","input_schema":{},"cache_control":{"type":"ephemeral","ttl":"1h"}}],
         "system":[{"type":"text","text":"%s","cache_control":{"type":"ephemeral","ttl":"1h"}}],
         "messages":[{"role":"user","content":[{"type":"text","text":"%s","cache_control":{"type":"ephemeral"}}]}]}"""
        .formatted("s".repeat(100), "u".repeat(100)));
    assertThat(r.ttl()).isEqualTo(Duration.ofHours(1));
    assertThat(r.prefixShare()).isBetween(0.4, 0.7);
  }

  @Test
  void aBreakpointWithoutTtlMeansFiveMinutes() throws Exception {
    PromptRetention r = anthropic("""
        {"model":"m","max_tokens":10,
         "messages":[{"role":"user","content":[{"type":"text","text":"hello","cache_control":{"type":"ephemeral"}}]}]}""");
    assertThat(r.ttl()).isEqualTo(Duration.ofMinutes(5));
    assertThat(r.prefixShare()).isEqualTo(1.0);
  }

  @Test
  void hintsThatAreNotUnderstoodAreIgnoredNotRejected() throws Exception {
    InferenceRequest r = parser.parse(ApiFormat.ANTHROPIC_MESSAGES, """
        {"model":"m","max_tokens":10,
         "messages":[{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral","ttl":"3d"}},
                                                {"type":"text","text":"x","cache_control":"yes"}]}]}""");
    assertThat(r.promptRetention()).isNull();
    assertThat(parser.parse(ApiFormat.OPENAI_CHAT, """
        {"model":"m","messages":[{"role":"user","content":"hi"}],"prompt_cache_retention":"in_memory"}""")
        .promptRetention()).isNull();
  }

  @Test
  void openAisExtendedRetentionCoversTheWholePrompt() throws Exception {
    PromptRetention r = parser.parse(ApiFormat.OPENAI_CHAT, """
        {"model":"m","messages":[{"role":"user","content":"hi"}],"prompt_cache_retention":"24h"}""")
        .promptRetention();
    assertThat(r).isEqualTo(new PromptRetention(Duration.ofHours(24), 1.0));
  }
}
