package dev.kinference.policy.classify;

/**
 * The default personal-data detector, {@code builtin}. The text is first normalised ({@link NormalizedText}:
 * percent escapes decoded, Unicode NFKC, a lower-case copy), then each family looks at it:
 * <ul>
 *   <li>{@link Secrets}: API keys, access tokens, JSON Web Tokens, private keys ({@code secret});</li>
 *   <li>{@link CardsAndIbans}: IBANs in any case and spacing (mod 97), payment cards with any separator (issuer, Luhn)
 *       ({@code iban}, {@code payment-card});</li>
 *   <li>{@link Emails}: plain, full-width, percent-encoded and obfuscated addresses ({@code email});</li>
 *   <li>{@link NationalIds}: SSN, NINO, NIR, DNI/NIE, codice fiscale, Steuer-ID, Personalausweis, BSN, Aadhaar,
 *       Chinese resident id, CPF, with their checks ({@code national-id});</li>
 *   <li>{@link Passports}: a passport number beside the word for passport in fifteen languages ({@code passport});</li>
 *   <li>{@link Phones}: phone numbers validated by libphonenumber ({@code phone});</li>
 *   <li>{@link PersonProfiles}: a name with a postal address or a date of birth ({@code person}).</li>
 * </ul>
 * A span found by an earlier family is not found again by a later one (a card number is not also a phone number).
 * Findings are {@code PersonalDataFinding(kind, "builtin", "", offset)}, where the offset is into the normalised
 * text: the same as the caller's text unless it held percent escapes or characters NFKC rewrites (full-width
 * letters, ligatures). Time is linear in the text; stateless and thread-safe.
 */
public final class BuiltinPersonalDataDetector implements PersonalDataDetector {

  /** Public for {@link java.util.ServiceLoader}. */
  public BuiltinPersonalDataDetector() {}

  @Override
  public String name() {
    return "builtin";
  }

  @Override
  public PersonalData detect(CharSequence text) {
    NormalizedText t = NormalizedText.of(text);
    Findings f = new Findings();
    Secrets.find(t.text(), f);
    Emails.find(t, f);
    NationalIds.words(t.text(), t.lower(), f);
    Keywords.Hits hits = ProfileKeywords.INDEX.scan(t.lower());
    Passports.find(t, hits, f);
    numbers(t, f);
    PersonProfiles.find(t, hits, f);
    return f.result();
  }

  /** Digit runs: cards, then numeric national ids, then phone numbers. */
  private static void numbers(NormalizedText t, Findings f) {
    String s = t.text();
    DigitRun run = new DigitRun();
    int from = 0;
    while (run.next(s, from)) {
      from = Math.max(run.end, run.start + 1);
      if (f.claimed(run.start, run.end)) {
        continue;
      }
      if (!CardsAndIbans.card(run, t.lower(), f) && !NationalIds.numeric(run, t.lower(), f)) {
        Phones.phone(run, t, f);
      }
    }
  }
}
