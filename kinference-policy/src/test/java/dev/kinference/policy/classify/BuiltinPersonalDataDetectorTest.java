package dev.kinference.policy.classify;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.request.ContentPart;
import dev.kinference.request.InferenceRequest;
import dev.kinference.request.Message;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.StringLength;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class BuiltinPersonalDataDetectorTest {

  private final BuiltinPersonalDataDetector detector = new BuiltinPersonalDataDetector();

  @ParameterizedTest(name = "{0} is {1}")
  @CsvSource(delimiter = '|', value = {
      // e-mail: plain, obfuscated, full-width, percent-encoded
      "write to jane.doe+news@mail.example.co.uk today | EMAIL",
      "john dot doe at gmail dot com | EMAIL",
      "jane[at]example[dot]org | EMAIL",
      "jane (at) example (dot) org | EMAIL",
      "ｊａｎｅ＠ｅｘａｍｐｌｅ．ｃｏｍ | EMAIL",
      "![x](https://img.example.net/a.png?u=jane.doe%40example.com) | EMAIL",
      // phones: international and national, EU, UK, US, India, China, Brazil, Japan, Gulf
      "call +44 20 7946 0958 | PHONE",
      "call me at (415) 555-2671 please | PHONE",
      "mon portable: 06 12 34 56 78 | PHONE",
      "Handy 01701234567 | PHONE",
      "01701234567 | PHONE",
      "bitte 0151 23456789 | PHONE",
      "meine Nummer 0170 1234567 | PHONE",
      "+49 30 901820 | PHONE",
      "0049 170 1234567 | PHONE",
      "+91 98765 43210 | PHONE",
      "手机 13800138000 | PHONE",
      "celular (11) 91234-5678 | PHONE",
      "携帯 090-1234-5678 | PHONE",
      "+971 50 123 4567 | PHONE",
      "+974 3312 3456 | PHONE",
      "Tel.: +49 (0)30 12345678 | PHONE",
      "Tlf: 612 34 56 78 | PHONE",
      "联系电话：13912345678 | PHONE",
      "お電話は03-1234-5678まで | PHONE",
      "Reach me at 202-555-0147 | PHONE",
      // cards with any separator
      "card 4111 1111 1111 1111 exp 12/29 | PAYMENT_CARD",
      "amex 378282246310005 | PAYMENT_CARD",
      "mastercard 5555-5555-5555-4444 | PAYMENT_CARD",
      "card 4111.1111.1111.1111 | PAYMENT_CARD",
      // IBAN: any case and spacing
      "IBAN DE89 3704 0044 0532 0130 00 | IBAN",
      "pay to GB82WEST12345698765432 | IBAN",
      "iban de89370400440532013000 | IBAN",
      "iban gb82 west 1234 5698 7654 32 | IBAN",
      // national ids
      "SSN 078-05-1120 | NATIONAL_ID",
      "SSN 078051120 | NATIONAL_ID",
      "social security number 078 05 1120 | NATIONAL_ID",
      "NI number AB123456C | NATIONAL_ID",
      "NINO AB 12 34 56 C | NATIONAL_ID",
      "DNI 12345678Z | NATIONAL_ID",
      "NIE X1234567L | NATIONAL_ID",
      "NIR 255081416802538 | NATIONAL_ID",
      "NIR 1 85 05 78 006 048 30 | NATIONAL_ID",
      "CF RSSMRA85T10A562S | NATIONAL_ID",
      "cf rssmra85t10a562s | NATIONAL_ID",
      "Steuer-ID 65929970489 | NATIONAL_ID",
      "Ausweis T220001293 | NATIONAL_ID",
      "BSN 234567892 | NATIONAL_ID",
      "Aadhaar 498765432102 | NATIONAL_ID",
      "4987 6543 2102 | NATIONAL_ID",
      "身份证 310115198506124713 | NATIONAL_ID",
      "CPF 123.456.789-09 | NATIONAL_ID",
      // passports
      "passport number 533380006 | PASSPORT",
      "Reisepass C01X00T47 | PASSPORT",
      "n° de passeport 18AV12345 | PASSPORT",
      "护照号 E12345678 | PASSPORT",
      "旅券番号 TK1234567 | PASSPORT",
      "여권번호 M12345678 | PASSPORT",
      // a person's profile
      "Jane Doe, 221 Main Street, Springfield | PERSON",
      "My name is Jane Doe, DOB 1985-03-14 | PERSON",
      "Name: Max Mustermann, geboren am 01.01.1980 | PERSON",
      "Max Mustermann, Musterstraße 12, 10115 Berlin | PERSON",
      "Jane Doe (born 1985-03-14) | PERSON",
      "my birthday is March 3, 1990 | PERSON",
      "Customer: Ahmed Al-Farsi, P.O. Box 1234, Dubai | PERSON",
      "携帯 ０９０－１２３４－５６７８ | PHONE",
      "(+44) 20 7946 0958 | PHONE",
      "+1-202-555-0147 | PHONE",
      // secrets
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
    assertThat(found.occurrences()).as(text).isEqualTo(1);
    assertThat(found.findings()).singleElement()
        .satisfies(f -> assertThat(f.detector()).isEqualTo("builtin"))
        .satisfies(f -> assertThat(f.field()).isEmpty());
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "What is the capital of France?",
      "The meeting is on 2024-03-15 at 10:30.",
      "2024-01-02 10:00",
      "deployed 2024-01-02T10:00:00Z, rolled back 2024-01-02 10:05",
      "Version 1.2.3.4 of the library, build 20240315",
      "user@localhost is not an address with a domain",
      "git@github.com:org/repo.git",
      "git clone git@gitlab.com:group/project.git",
      "ssh://git@github.com/org/repo",
      "card 4111 1111 1111 1112 fails the Luhn check",
      "IBAN DE89 3704 0044 0532 0130 01 fails mod-97",
      "SSN 000-12-3456 is not valid",
      "SSN 666-12-3456 and 900-12-3456 are not valid",
      "a bare 219099999 without a keyword",
      "DNI 12345678A has the wrong letter",
      "CF RSSMRA85T10A562X has the wrong check character",
      "Aadhaar 498765432103 fails Verhoeff",
      "身份证 310115198506124710 fails the check",
      "CPF 123.456.789-00 fails",
      "BSN 234567893 fails the 11-test",
      "The population is 1 000 000 000 people",
      "serve on 10.0.0.12:8000 and 192.168.100.200",
      "sk-learn is a nickname, sk-short too",
      "pi is 3.14159265358979323846",
      "order number 1234567890123 has no issuer prefix",
      "order 1234567890 and invoice 2024-000123",
      "@mention and @@ and a@ and @b.c",
      "id 123e4567-e89b-12d3-a456-426614174000",
      "md5 9e107d9d372bb6826bd81d3542a419d6",
      "listen on port 8080, timeout 30000 ms, retry after 1500ms",
      "it took 1h 30m 15s",
      "see icon@2x.png",
      "passport office opens at 9:00",
      "I live on the main street",
      "localhost:8080 and 127.0.0.1:5432",
      "at 10:00:00 and 12:30, ratio 16:9, 1920x1080 at 60 Hz",
      "The invoice INV-2024-00123 totals 1.234,56 EUR",
      "SELECT * FROM users WHERE id = 12345678;",
      "The function returns 4294967295 for -1",
      "Our office: 100 Main Street, Springfield (we are open 9-5)",
      "Microsoft Corporation, One Microsoft Way, Redmond, WA 98052",
      "tracking 9400111899223856928499, ISBN 978-3-16-148410-0, call 911 or 112",
      "Amount: 12 345 678,90; zip 90210",
      "git@bitbucket.org:team/repo.git",
      "Translate to German: The White House is at 1600 Pennsylvania Avenue.",
      "Plan a trip: Berlin Hauptbahnhof at 10:15, then Alexanderplatz 1, then dinner.",
      "Erstelle eine Rechnung für die Firma Müller GmbH, Hauptstraße 5, 10115 Berlin.",
      "Order #A-1029-3847 was shipped via UPS 1Z 999 AA1 01 2345 6784",
      "Meeting ID: 845 2231 9876, passcode 123456",
      ""})
  void doesNotFlag(String text) {
    assertThat(detector.detect(text).found()).as(text + " -> " + detector.detect(text).describe()).isFalse();
  }

  @Test
  void findingsKeepTheirOffsetsInTheNormalisedText() {
    PersonalData found = detector.detect("mail a@b.io or card 4242424242424242");
    assertThat(found.findings()).extracting(PersonalDataFinding::offset).containsExactly(5, 20);
    assertThat(found.findings()).extracting(PersonalDataFinding::kind)
        .containsExactly(PersonalDataKind.EMAIL, PersonalDataKind.PAYMENT_CARD);
  }

  @Test
  void countsEveryOccurrenceAndKind() {
    PersonalData found = detector.detect("a@b.io, c@d.io and card 4242424242424242");
    assertThat(found.kinds()).containsExactlyInAnyOrder(PersonalDataKind.EMAIL, PersonalDataKind.PAYMENT_CARD);
    assertThat(found.occurrences()).isEqualTo(3);
    assertThat(found.describe()).isEqualTo("email, payment-card");
  }

  @Test
  void aCardIsNotAlsoAPhoneNumber() {
    assertThat(detector.detect("call 4111 1111 1111 1111").kinds()).containsExactly(PersonalDataKind.PAYMENT_CARD);
  }

  @Test
  void newKindsHaveTheirYamlNames() {
    assertThat(PersonalDataKind.PASSPORT.yamlName()).isEqualTo("passport");
    assertThat(PersonalDataKind.PERSON.yamlName()).isEqualTo("person");
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
    assertThat(detector.detect(" at ".repeat(200_000)).found()).isFalse();
    assertThat(detector.detect("a dot ".repeat(200_000)).found()).isFalse();
    assertThat(detector.detect("12 ".repeat(200_000)).found()).isFalse();
    assertThat(detector.detect("passport ".repeat(100_000)).found()).isFalse();
    assertThat(detector.detect("Jane Doe street ".repeat(60_000)).found()).isFalse();
    assertThat(detector.detect("%4".repeat(300_000)).found()).isFalse();
    // many findings: overlap tests must not grow with their number
    assertThat(detector.detect("a@b.io 0151 23456789 ".repeat(40_000)).occurrences()).isEqualTo(80_000);
  }

  @Property(tries = 300)
  void neverThrows(@ForAll @StringLength(max = 200) String text) {
    assertThat(detector.detect(text)).isNotNull();
  }

  /**
   * Recall and false positives on the hand-written sample ({@link PersonalDataSamples}, 15 languages): every positive
   * must be found as its kind, and no negative may be flagged at all. Prints what it measured.
   */
  @Test
  void recallAndFalsePositivesOnTheSample() {
    List<String> missed = new ArrayList<>();
    for (PersonalDataSamples.Positive p : PersonalDataSamples.POSITIVES) {
      PersonalData found = detector.detect(p.text());
      if (!found.kinds().contains(p.kind())) {
        missed.add(p.kind() + ": " + p.text() + " -> " + found.describe());
      }
    }
    List<String> flagged = new ArrayList<>();
    for (String n : PersonalDataSamples.NEGATIVES) {
      PersonalData found = detector.detect(n);
      if (found.found()) {
        flagged.add(n + " -> " + found.describe());
      }
    }
    int positives = PersonalDataSamples.POSITIVES.size();
    int negatives = PersonalDataSamples.NEGATIVES.size();
    double recall = 1.0 - (double) missed.size() / positives;
    double fpRate = (double) flagged.size() / negatives;
    System.out.printf("personal-data sample: %d positives, recall %.1f%% (missed %s); %d negatives, false positives"
        + " %.1f%% (%s)%n", positives, recall * 100, missed, negatives, fpRate * 100, flagged);
    assertThat(positives + negatives).isGreaterThanOrEqualTo(100);
    assertThat(recall).as("missed %s", missed).isGreaterThanOrEqualTo(0.98);
    assertThat(fpRate).as("flagged %s", flagged).isLessThanOrEqualTo(0.02);
  }

  @Test
  void luhn() {
    assertThat(Checksums.luhn("79927398713".toCharArray(), 11)).isTrue();
    assertThat(Checksums.luhn("79927398710".toCharArray(), 11)).isFalse();
  }

  @Test
  void checksums() {
    assertThat(Checksums.verhoeff("2363".toCharArray(), 4)).isTrue();
    assertThat(Checksums.mod11_2("11010519491231002X".toCharArray())).isTrue();
    assertThat(Checksums.mod11_10("86095742719".toCharArray())).isTrue();
    assertThat(Checksums.steuerIdDigits("86095742719".toCharArray())).isTrue();
    assertThat(Checksums.steuerIdDigits("12345678903".toCharArray())).isFalse();
    assertThat(Checksums.elevenTest("111222333".toCharArray())).isTrue();
    assertThat(Checksums.cpf("52998224725".toCharArray())).isTrue();
    assertThat(Checksums.cpf("11111111111".toCharArray())).isFalse();
    assertThat(Checksums.icao731("T22000129", 0, 9)).isEqualTo(3);
  }

  @Test
  void theDetectorIsFoundByServiceLoader() {
    assertThat(dev.kinference.plugin.Plugins.load(PersonalDataDetector.class).names()).contains("builtin");
  }
}
