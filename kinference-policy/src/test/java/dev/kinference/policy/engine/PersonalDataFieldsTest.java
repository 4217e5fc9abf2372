package dev.kinference.policy.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.policy.PolicyVerdict;
import dev.kinference.policy.config.LoadResult;
import dev.kinference.policy.config.PolicyLoader;
import dev.kinference.request.ApiFormat;
import dev.kinference.request.InferenceRequest;
import dev.kinference.request.InvalidRequestException;
import dev.kinference.request.RequestParser;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Personal data anywhere in a request that could leave keeps it local (pool "small" saturated, alias "chat-small"
 * overflowing to the cloud), with the trace naming the detector and field, never the value; content that cannot be
 * inspected keeps it local unless {@code personalData.unknownContent: inspect-only}.
 */
class PersonalDataFieldsTest {

  static final String EMAIL = "jane.doe@example.com";
  static final String PNG = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk";

  record Case(String name, ApiFormat format, String body, String field) {
    @Override
    public String toString() {
      return name;
    }
  }

  static List<Case> personal() {
    String q = "\"messages\":[{\"role\":\"user\",\"content\":\"Summarise my account.\"}]";
    return List.of(
        new Case("user", ApiFormat.OPENAI_CHAT, "{\"model\":\"chat-small\"," + q + ",\"user\":\"" + EMAIL + "\"}",
            "user"),
        new Case("metadata", ApiFormat.OPENAI_CHAT, "{\"model\":\"chat-small\"," + q
            + ",\"metadata\":{\"customer_email\":\"" + EMAIL + "\"}}", "metadata.customer_email"),
        new Case("message name", ApiFormat.OPENAI_CHAT, "{\"model\":\"chat-small\",\"messages\":[{\"role\":\"user\","
            + "\"name\":\"" + EMAIL + "\",\"content\":\"hello\"}]}", "messages[0].name"),
        new Case("tool definition", ApiFormat.OPENAI_CHAT, "{\"model\":\"chat-small\"," + q + ",\"tools\":[{\"type\":"
            + "\"function\",\"function\":{\"name\":\"mail\",\"description\":\"Mails " + EMAIL + "\",\"parameters\":"
            + "{\"type\":\"object\"}}}]}", "tools[0].function.description"),
        new Case("tool call arguments", ApiFormat.OPENAI_CHAT, "{\"model\":\"chat-small\",\"messages\":[{\"role\":"
            + "\"assistant\",\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"f\","
            + "\"arguments\":\"{\\\"to\\\":\\\"" + EMAIL + "\\\"}\"}}]},{\"role\":\"tool\",\"tool_call_id\":\"c1\","
            + "\"content\":\"done\"}]}", "messages[0].tool_calls[0].function.arguments"),
        new Case("image URL query, percent-encoded", ApiFormat.OPENAI_CHAT, "{\"model\":\"chat-small\",\"messages\":"
            + "[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"What is this?\"},{\"type\":"
            + "\"image_url\",\"image_url\":{\"url\":\"https://img.example.com/a.png?owner=jane.doe%40example.com\"}}]}]}",
            "messages[0].content[1].image_url.url"),
        new Case("text data URL", ApiFormat.OPENAI_CHAT, "{\"model\":\"chat-small\",\"messages\":[{\"role\":\"user\","
            + "\"content\":[{\"type\":\"file\",\"file\":{\"filename\":\"a.txt\",\"file_data\":\"data:text/plain;"
            + "base64," + java.util.Base64.getEncoder().encodeToString(("mail " + EMAIL).getBytes(
                java.nio.charset.StandardCharsets.UTF_8)) + "\"}}]}]}", "messages[0].content[0].file.file_data"),
        new Case("anthropic system block", ApiFormat.ANTHROPIC_MESSAGES, "{\"model\":\"chat-small\",\"max_tokens\":"
            + "10,\"system\":[{\"type\":\"text\",\"text\":\"The customer is " + EMAIL + "\"}],\"messages\":[{\"role\":"
            + "\"user\",\"content\":\"hi\"}]}", "system[0].text"),
        new Case("anthropic document", ApiFormat.ANTHROPIC_MESSAGES, "{\"model\":\"chat-small\",\"max_tokens\":10,"
            + "\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"document\",\"source\":{\"type\":\"text\","
            + "\"media_type\":\"text/plain\",\"data\":\"Contact " + EMAIL + "\"}},{\"type\":\"text\",\"text\":"
            + "\"Summarise\"}]}]}", "messages[0].content[0].source.data"),
        new Case("anthropic metadata", ApiFormat.ANTHROPIC_MESSAGES, "{\"model\":\"chat-small\",\"max_tokens\":10,"
            + "\"metadata\":{\"user_id\":\"" + EMAIL + "\"},\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}",
            "metadata.user_id"),
        new Case("metadata key", ApiFormat.OPENAI_CHAT, "{\"model\":\"chat-small\"," + q
            + ",\"metadata\":{\"" + EMAIL + "\":\"vip\"}}", "metadata.<key#0>"),
        new Case("prompt", ApiFormat.OPENAI_COMPLETIONS, "{\"model\":\"chat-small\",\"prompt\":\"Write to " + EMAIL
            + "\"}", "prompt"));
  }

  static InferenceRequest parse(ApiFormat format, String body) throws InvalidRequestException {
    return RequestParser.defaults().parse(format, body).toBuilder().tenant("a").build();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("personal")
  void personalDataInAnyFieldStaysLocalAndTheTraceSaysWhereButNotWhat(Case c) throws Exception {
    Scenario s = Scenario.of("").saturate("small");
    PolicyVerdict.Proceed p = s.proceed(parse(c.format(), c.body()));
    assertThat(p.fallbackEndpointIds()).isEmpty();
    assertThat(s.candidates(p)).containsExactly("s1", "s2");
    assertThat(p.trace()).anyMatch(t -> t.contains("found email (email by builtin at " + c.field() + "+"));
    assertThat(String.join("\n", p.trace())).doesNotContain(EMAIL).doesNotContain("jane.doe");
  }

  @Test
  void aCleanRequestWithAnImageUrlOverflowsToTheCloud() throws Exception {
    Scenario s = Scenario.of("").saturate("small");
    PolicyVerdict.Proceed p = s.proceed(parse(ApiFormat.OPENAI_CHAT, "{\"model\":\"chat-small\",\"user\":"
        + "\"u-1234\",\"metadata\":{\"ticket\":\"T-77\"},\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":"
        + "\"text\",\"text\":\"What is this?\"},{\"type\":\"image_url\",\"image_url\":{\"url\":"
        + "\"https://img.example.com/cat%20photo.png\"}}]}]}"));
    assertThat(p.preferFallbacks()).isTrue();
    assertThat(p.fallbackEndpointIds()).contains("external:cloud/m-mini");
  }

  static String withImage(String url) {
    return "{\"model\":\"chat-small\",\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":"
        + "\"What is this?\"},{\"type\":\"image_url\",\"image_url\":{\"url\":\"" + url + "\"}}]}]}";
  }

  @Test
  void uninspectableContentIsPersonalByDefaultAndTheTraceSaysWhy() throws Exception {
    Scenario s = Scenario.of("").saturate("small");
    PolicyVerdict.Proceed image = s.proceed(parse(ApiFormat.OPENAI_CHAT, withImage(PNG)));
    assertThat(image.fallbackEndpointIds()).isEmpty();
    assertThat(s.candidates(image)).containsExactly("s1", "s2");
    assertThat(image.trace()).anyMatch(t -> t.contains("uninspectable image (image/png, base64) at "
        + "messages[0].content[1].image_url.url: treated as personal"));

    InferenceRequest audio = parse(ApiFormat.OPENAI_CHAT, "{\"model\":\"chat-small\",\"messages\":[{\"role\":"
        + "\"user\",\"content\":[{\"type\":\"input_audio\",\"input_audio\":{\"data\":\"UklGRiQAAABXQVZF\","
        + "\"format\":\"wav\"}}]}]}");
    assertThat(s.proceed(audio).trace()).anyMatch(t -> t.contains("uninspectable audio (audio/wav) at "
        + "messages[0].content[0].input_audio.data"));
    InferenceRequest file = parse(ApiFormat.OPENAI_CHAT, "{\"model\":\"chat-small\",\"messages\":[{\"role\":"
        + "\"user\",\"content\":[{\"type\":\"file\",\"file\":{\"file_id\":\"file-abc\"}}]}]}");
    assertThat(s.proceed(file).fallbackEndpointIds()).isEmpty();
    InferenceRequest pdf = parse(ApiFormat.ANTHROPIC_MESSAGES, "{\"model\":\"chat-small\",\"max_tokens\":10,"
        + "\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"document\",\"source\":{\"type\":\"base64\","
        + "\"media_type\":\"application/pdf\",\"data\":\"JVBERi0xLjQK\"}}]}]}");
    assertThat(s.proceed(pdf).trace()).anyMatch(t -> t.contains("uninspectable document (application/pdf) at "
        + "messages[0].content[0].source.data"));
    // a rule matching personal data matches it too
    Scenario refusing = Scenario.of(Scenario.policy("p", 0, """
        - name: refuse-when-full
          match: {personalData: true}
          action: {onSaturation: reject}""")).saturate("small");
    // the fallback is dropped, so the saturated pool refuses
    PolicyVerdict v = refusing.eval(parse(ApiFormat.OPENAI_CHAT, withImage(PNG)));
    assertThat(v).isInstanceOf(PolicyVerdict.Reject.class);
    assertThat(((PolicyVerdict.Reject) v).httpStatus()).isEqualTo(503);
  }

  @Test
  void inspectOnlyLetsUninspectableContentGoByItsText() throws Exception {
    Scenario s = Scenario.of("""
        apiVersion: kinference.dev/v1alpha1
        kind: InferencePolicy
        metadata: {name: images-may-leave}
        spec:
          personalData: {unknownContent: inspect-only}
        """).saturate("small");
    PolicyVerdict.Proceed p = s.proceed(parse(ApiFormat.OPENAI_CHAT, withImage(PNG)));
    assertThat(p.fallbackEndpointIds()).contains("external:cloud/m-mini");
    // the text still counts
    PolicyVerdict.Proceed pii = s.proceed(parse(ApiFormat.OPENAI_CHAT, withImage(PNG).replace("What is this?",
        "Mail it to " + EMAIL)));
    assertThat(pii.fallbackEndpointIds()).isEmpty();
    // a policy saying local wins over one saying inspect-only
    Scenario both = Scenario.of("""
        apiVersion: kinference.dev/v1alpha1
        kind: InferencePolicy
        metadata: {name: images-may-leave}
        spec:
          personalData: {unknownContent: inspect-only}
        ---
        apiVersion: kinference.dev/v1alpha1
        kind: InferencePolicy
        metadata: {name: images-stay}
        spec:
          personalData: {unknownContent: local}
          rules: []
        """).saturate("small");
    assertThat(both.proceed(parse(ApiFormat.OPENAI_CHAT, withImage(PNG))).fallbackEndpointIds()).isEmpty();
  }

  @Test
  void theSettingIsValidated() {
    LoadResult bad = PolicyLoader.load("""
        apiVersion: kinference.dev/v1alpha1
        kind: InferencePolicy
        metadata: {name: p}
        spec:
          personalData: {unknownContent: maybe, extra: 1}
        """, "p.yaml");
    assertThat(bad.report()).contains("spec.personalData.unknownContent", "maybe", "local", "inspect-only",
        "spec.personalData.extra: unknown field");
    LoadResult empty = PolicyLoader.load("""
        apiVersion: kinference.dev/v1alpha1
        kind: InferencePolicy
        metadata: {name: p}
        spec:
          personalData: {}
        """, "p.yaml");
    assertThat(empty.report()).contains("unknownContent");
  }
}
