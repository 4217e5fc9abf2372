package dev.kinference.policy.classify;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.request.ContentPart;
import dev.kinference.request.InferenceRequest;
import dev.kinference.request.Message;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

class BuiltinPersonalDataDetectorTest {

  private final BuiltinPersonalDataDetector detector = new BuiltinPersonalDataDetector();

  @ParameterizedTest(name = "{0} is {1}")
  @CsvSource(delimiter = '|', value = {
      "write to jane.doe+news@mail.example.co.uk today | EMAIL",
      "call +44 20 7946 0958 | PHONE",
      "call me at (555) 123-4567 please | PHONE",
      "mon portable: 06 12 34 56 78 | PHONE",
      "card 4111 1111 1111 1111 exp 12/29 | PAYMENT_CARD",
      "amex 378282246310005 | PAYMENT_CARD",
      "mastercard 5555-5555-5555-4444 | PAYMENT_CARD",
      "IBAN DE89 3704 0044 0532 0130 00 | IBAN",
      "pay to GB82WEST12345698765432 | IBAN",
      "SSN 078-05-1120 | NATIONAL_ID",
      "NI number AB123456C | NATIONAL_ID",
      "DNI 12345678Z | NATIONAL_ID",
      "NIE X1234567L | NATIONAL_ID",
      "NIR 255081416802538 | NATIONAL_ID",
      "CF RSSMRA85T10A562S | NATIONAL_ID",
      "key sk-proj-abcdefghij0123456789KLMN | SECRET",
      "aws AKIAIOSFODNN7EXAMPLE | SECRET",
      "token ghp_abcdefghijklmnopqrstuvwxyz0123456789 | SECRET",
      "hf_abcdefghijklmnopqrstuvwxyz12345678 | SECRET",
      "-----BEGIN RSA PRIVATE KEY----- MIIE | SECRET",
      "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U | SECRET",
  })
  void finds(String text, PersonalDataKind kind) {
    PersonalData found = detector.detect(text);
    assertThat(found.kinds()).as(text).containsExactly(kind);
    assertThat(found.occurrences()).isEqualTo(1);
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "What is the capital of France?",
      "The meeting is on 2024-03-15 at 10:30.",
      "Version 1.2.3.4 of the library, build 20240315",
      "user@localhost is not an address with a domain",
      "card 4111 1111 1111 1112 fails the Luhn check",
      "IBAN DE89 3704 0044 0532 0130 01 fails mod-97",
      "SSN 000-12-3456 is not valid",
      "DNI 12345678A has the wrong letter",
      "The population is 1 000 000 000 people",
      "serve on 10.0.0.12:8000 and 192.168.100.200",
      "sk-learn is a nickname, sk-short too",
      "pi is 3.14159265358979323846",
      "order number 1234567890123 has no issuer prefix",
      "@mention and @@ and a@ and @b.c",
      ""})
  void doesNotFlag(String text) {
    assertThat(detector.detect(text).found()).as(text).isFalse();
  }

  @Test
  void countsEveryOccurrenceAndKind() {
    PersonalData found = detector.detect("a@b.io, c@d.io and card 4242424242424242");
    assertThat(found.kinds()).containsExactlyInAnyOrder(PersonalDataKind.EMAIL, PersonalDataKind.PAYMENT_CARD);
    assertThat(found.occurrences()).isEqualTo(3);
    assertThat(found.describe()).isEqualTo("email, payment-card");
  }

  @Test
  void readsEveryPartOfARequest() {
    InferenceRequest r = InferenceRequest.builder("m")
        .system("be nice")
        .message(new Message("assistant", List.of(new ContentPart.ToolUse("1", "lookup", "{\"email\":\"x@y.org\"}"))))
        .message(new Message("tool", List.of(new ContentPart.ToolResult("1",
            List.of(new ContentPart.Text("IBAN GB82WEST12345698765432")), false))))
        .user("thanks")
        .build();
    assertThat(detector.detect(r).kinds()).containsExactlyInAnyOrder(PersonalDataKind.EMAIL, PersonalDataKind.IBAN);
  }

  @Test
  void scansLargeAndHostileTextInLinearTime() {
    // no timing assertion: these would take minutes with a backtracking scanner
    assertThat(detector.detect("a".repeat(1_000_000) + "@").found()).isFalse();
    assertThat(detector.detect("1".repeat(1_000_000)).found()).isFalse();
    assertThat(detector.detect("@a.".repeat(300_000)).found()).isFalse();
    assertThat(detector.detect("DE89 ".repeat(200_000)).found()).isFalse();
    assertThat(detector.detect("eyJ.".repeat(200_000)).found()).isFalse();
  }

  @Test
  void luhn() {
    assertThat(BuiltinPersonalDataDetector.luhn("79927398713".toCharArray(), 11)).isTrue();
    assertThat(BuiltinPersonalDataDetector.luhn("79927398710".toCharArray(), 11)).isFalse();
  }

  @Test
  void theDetectorIsFoundByServiceLoader() {
    assertThat(dev.kinference.plugin.Plugins.load(PersonalDataDetector.class).names()).contains("builtin");
  }
}
