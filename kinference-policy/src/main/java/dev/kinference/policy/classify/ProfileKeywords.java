package dev.kinference.policy.classify;

/** The keyword groups of passports, addresses and dates of birth, found in one {@link Keywords} pass. */
final class ProfileKeywords {

  static final int PASSPORT = 0;
  static final int STREET = 1;
  static final int STREET_SUFFIX = 2;
  static final int CJK_NUMBERED = 3;
  static final int DOB_LABEL = 4;
  static final int DOB_PHRASE = 5;

  static final Keywords INDEX = new Keywords(
      new String[][] {Passports.KEYWORDS, Addresses.STREET_WORDS, Addresses.STREET_SUFFIXES, Addresses.CJK_NUMBERED,
          PersonProfiles.DOB_LABELS, PersonProfiles.DOB_PHRASES},
      new boolean[] {false, false, true, false, false, false},
      new boolean[] {false, true, false, false, false, false});

  private ProfileKeywords() {}
}
