package dev.kinference.jmh;

import dev.kinference.policy.classify.BuiltinPersonalDataDetector;
import dev.kinference.policy.classify.PersonalData;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What the {@code builtin} personal-data detector costs per prompt: {@link BuiltinPersonalDataDetector#detect} over
 * typical prompt text of {@code chars} characters (1 KB and 16 KB) in several languages (English, German, French,
 * Spanish, Italian, Dutch, Portuguese, Polish, Russian, Chinese, Japanese, Arabic, Hindi, with code, timestamps,
 * versions, IPs and numbers), {@code clean} (nothing to find) or {@code personal} (a piece of personal data, of every
 * kind in turn, about every 400 characters). Divide the score by {@code chars / 1024} for µs per KB; the figures are
 * in docs/PERFORMANCE.md ("Personal-data detection cost").
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"-Xms512m", "-Xmx512m"})
@State(Scope.Benchmark)
public class PersonalDataDetectorBenchmark {

  private static final String[] PROSE = {
      "Summarise the following meeting notes in three bullet points and list the open questions. ",
      "The deploy ran at 2024-01-02 10:00 and was rolled back at 10:42 after the p99 latency rose to 812 ms. ",
      "Upgrade the service from version 1.2.3 to 1.4.0, then restart the pods on 10.0.12.34:8080. ",
      "Fasse bitte den folgenden Text in einfachen Worten zusammen und nenne die wichtigsten Punkte. ",
      "Peux-tu traduire ce paragraphe en anglais en gardant un ton formel et précis ? ",
      "Explícame la diferencia entre un proceso y un hilo con un ejemplo en Java. ",
      "Scrivi una funzione che ordina una lista di 1000 numeri interi in modo efficiente. ",
      "Leg uit hoe de garbage collector van de JVM werkt bij grote heaps van 32 GB. ",
      "Explique como configurar um cluster Kubernetes com três nós e um balanceador. ",
      "Napisz krótkie podsumowanie tego artykułu o sztucznej inteligencji. ",
      "Объясни, как работает механизм внимания в трансформерах, простыми словами. ",
      "请用三句话总结这篇关于量子计算的文章，并列出关键术语。",
      "次の文章を要約して、重要なポイントを三つ挙げてください。",
      "اشرح لي كيف تعمل الشبكات العصبية بطريقة مبسطة مع مثال. ",
      "कृपया इस लेख का सारांश तीन वाक्यों में लिखिए। ",
      "for (int i = 0; i < n; i++) { sum += values[i] * weights[i]; } // order 4839201, build 20240315 ",
      "git clone git@github.com:org/repo.git && mvn -q package -DskipTests; sha 3f786850e387550fdab8 ",
  };

  private static final String[] PERSONAL = {
      "Please reply to jane.doe@example.com about it. ",
      "Ruf mich an unter 0151 23456789, danke. ",
      "Charge the card 4532 0151 1283 0366 for the order. ",
      "Überweisung auf DE89 3704 0044 0532 0130 00 bitte. ",
      "My SSN is 078-05-1120 for the tax form. ",
      "Mi DNI es 45678912S y vivo en Madrid. ",
      "passport number 533380006 expires soon. ",
      "Name: Anna Müller, Hauptstraße 5, 10115 Berlin. ",
      "Patient Jane Roe, DOB 03/14/1985, has a headache. ",
      "mon adresse est john dot doe at gmail dot com. ",
      "我的手机号是 138 0013 8000，请联系我。",
      "Call me on +44 20 7946 0958 tomorrow. ",
  };

  /** Text length in characters. */
  @Param({"1024", "16384"})
  public int chars = 1024;

  /** {@code clean} (nothing to find) or {@code personal} (personal data about every 400 characters). */
  @Param({"clean", "personal"})
  public String content = "clean";

  private final BuiltinPersonalDataDetector detector = new BuiltinPersonalDataDetector();
  private String text = "";

  @Setup
  public void build() {
    text = text(chars, content.equals("personal"));
  }

  /** A prompt of {@code length} characters: prose in turn, with a piece of personal data every ~400 if asked. */
  public static String text(int length, boolean personal) {
    StringBuilder sb = new StringBuilder(length + 200);
    int p = 0;
    int k = 0;
    int nextPersonal = 200;
    while (sb.length() < length) {
      if (personal && sb.length() >= nextPersonal) {
        sb.append(PERSONAL[k++ % PERSONAL.length]);
        nextPersonal += 400;
      } else {
        sb.append(PROSE[p++ % PROSE.length]);
      }
    }
    sb.setLength(length);
    return sb.toString();
  }

  @Benchmark
  public PersonalData detect() {
    return detector.detect(text);
  }
}
