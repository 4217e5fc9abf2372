package dev.kinference.policy.classify;

import java.util.Locale;

/** A kind of personal or secret data a {@link PersonalDataDetector} finds. */
public enum PersonalDataKind {
  EMAIL,
  PHONE,
  /** A payment card number (13 to 19 digits, a known issuer prefix, valid Luhn check digit). */
  PAYMENT_CARD,
  /** An IBAN with the right length for its country and a valid mod-97 check. */
  IBAN,
  /**
   * A national identity number: US SSN, UK NINO, French NIR, Spanish DNI/NIE, Italian codice fiscale, German Steuer-ID
   * and ID card number, Dutch BSN, Indian Aadhaar, Chinese resident identity number, Brazilian CPF.
   */
  NATIONAL_ID,
  /** A passport number beside the word for passport. */
  PASSPORT,
  /** A person's name with a postal address or a date of birth. */
  PERSON,
  /** An API key, access token or private key. */
  SECRET;

  /** The YAML spelling: lower case with dashes, such as {@code payment-card}. */
  public String yamlName() {
    return name().toLowerCase(Locale.ROOT).replace('_', '-');
  }
}
