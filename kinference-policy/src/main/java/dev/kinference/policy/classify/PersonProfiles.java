package dev.kinference.policy.classify;

import java.util.Set;

/**
 * A person's profile: a name together with a postal address or a date of birth. Heuristics, in many languages:
 * <ul>
 *   <li>a date of birth is a label (DOB, date of birth, Geburtsdatum, date de naissance, fecha de nacimiento, data di
 *       nascita, 生年月日, 出生日期, ...) or a phrase (born on, geboren am, né le, nacido el, nato il, ...) followed
 *       closely by a date; a form label with a date is enough, a phrase needs a name near it;</li>
 *   <li>an address is a house number with a street word (12 Baker Street, Hauptstraße 5, 12 rue de la Paix, Calle
 *       Mayor 5, Via Roma 12, Kerkstraat 10, Rua Augusta 100, ul. Długa 5, 中山路123号, 1丁目2番3号) or a postal code
 *       and a city (10115 Berlin, 75001 Paris, 1012 AB Amsterdam, 00-950 Warszawa, Springfield, IL 62704, SW1A 1AA);
 *       it needs a name near it;</li>
 *   <li>a name is a label ("Name:", "my name is", "je m'appelle", "me llamo", "меня зовут", "我叫", ...) or two
 *       capitalised words.</li>
 * </ul>
 * Hand-written: named-entity recognisers (OpenNLP, CoreNLP) need models per language and cost far more than the
 * budget; an external recogniser can be added as another detector (Presidio).
 */
final class PersonProfiles {

  static final String[] DOB_LABELS = {"dob", "d.o.b", "date of birth", "birth date", "birthdate",
      "geburtsdatum", "geb.", "date de naissance", "fecha de nacimiento", "fecha nac", "data di nascita",
      "geboortedatum", "data de nascimento", "data urodzenia", "дата рождения", "生年月日", "出生日期", "出生年月",
      "doğum tarihi", "تاريخ الميلاد", "जन्म तिथि", "जन्मतिथि", "생년월일", "date naiss", "nascimento",
      "födelsedatum", "fødselsdato", "syntymäaika", " ur. ", "urodzony", "urodzona", "född ", "født ",
      // said of oneself: the writer's own date of birth
      "i was born", "je suis né", "je suis née", "ich bin am", "ich wurde am", "nací el", "naci el", "sono nato",
      "sono nata", "ik ben geboren", "nasci em", "я родился", "я родилась", "我出生", "urodziłem",
      "urodziłam", "doğdum", "my birthday", "mein geburtstag", "mon anniversaire", "mi cumpleaños",
      "il mio compleanno", "mijn verjaardag", "meu aniversário"};
  static final String[] DOB_PHRASES = {"born on", "born in", "was born", "born ", "birthday", "geboren am",
      "geboren", "né le", "née le", "né en", "nacido el", "nacida el", "nació el", "nato il", "nata il", "nato a",
      "geboren op", "nascido em", "nascida em", "nasceu em", "urodził", "urodzona", "родился", "родилась",
      "出生于", "出生於", "生まれ", "doğdu", "ولد", "ولدت", "जन्म", "태어났"};
  private static final String[] NAME_LABELS = {"name:", "name is", "my name", "named", "full name", "nom:",
      "nom :", "je m'appelle", "ich heiße", "ich heisse", "mein name", "name lautet", "me llamo", "mi nombre",
      "nombre:", "mi chiamo", "il mio nome", "nome:", "mijn naam", "ik heet", "meu nome", "chamo-me",
      "nazywam się", "imię", "меня зовут", "имя", "фио", "我叫", "我的名字", "姓名", "名字", "氏名", "名前", "اسمي",
      "الاسم", "मेरा नाम", "नाम", "제 이름", "이름", "adım", "ismim", "mr.", "mrs.", "ms.", "herr ", "frau ", "mme",
      "sr.", "sra.", "sig.", "dr.", "patient", "customer", "kunde", "client", "cliente", "employee", "mitarbeiter",
      "tenant", "mieter", "applicant", "antragsteller",
      // in the name of: a letter or contract written for someone
      "in the name of", "au nom de", "im namen", "a nombre de", "a nome di", "em nome de", "op naam van",
      "adına", "باسم", "के नाम", "на имя", "名義",
      // an address said to be someone's: my address, address:, 住址
      "my address", "address:", "home address", "meine adresse", "adresse:", "mon adresse", "mi dirección",
      "dirección:", "domicilio", "il mio indirizzo", "indirizzo:", "mijn adres", "adres:", "meu endereço",
      "endereço:", "mój adres", "мой адрес", "адрес:", "我的地址", "住址", "地址", "住所", "عنواني", "मेरा पता",
      "주소", "adresim", "i live", "ich wohne", "j'habite", "vivo en", "abito", "ik woon", "moro na", "moro em",
      "mieszkam", "я живу", "我住在"};
  private static final Set<String> NOT_NAMES = Set.of("The", "This", "That", "These", "My", "Our", "Your", "His",
      "Her", "Their", "Please", "Hello", "Hi", "Dear", "Thanks", "Thank", "Der", "Die", "Das", "Le", "La", "Les",
      "El", "Los", "Las", "Il", "Lo", "De", "Het", "Een", "Ein", "Eine", "Mein", "Meine", "Unser", "Unsere", "Street",
      "Road", "Avenue", "January", "February", "March", "April", "May", "June", "July", "August", "September",
      "October", "November", "December", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday",
      "Sunday", "I", "We", "You", "It", "In", "On", "At", "For", "And", "Or", "But", "If", "When", "What", "How",
      "Why", "Where", "Who", "Can", "Could", "Would", "Should", "Is", "Are", "Was", "Send", "Write", "Translate",
      // organisations and places: Microsoft Corporation, One Microsoft Way, New York, Central Station
      "Corporation", "Corp", "Inc", "Ltd", "Limited", "Company", "Group", "Bank", "University", "Universität",
      "Université", "Universidad", "Hotel", "Museum", "Museo", "Musée", "Hospital", "Krankenhaus", "Office",
      "Airport", "Station", "Bahnhof", "Gare", "Park", "Center", "Centre", "Mall", "Restaurant", "Store", "Shop",
      "School", "College", "Church", "Kirche", "Foundation", "Institute", "Institut", "Ministry", "Department",
      "Agency", "Council", "One", "Two", "North", "South", "East", "West", "New", "Saint", "San", "Santa", "Way",
      "Lane", "Drive", "Boulevard", "Place", "Court", "Square", "Terrace", "Headquarters", "Building", "Tower",
      "House", "Palace", "Bridge", "Hall", "Gallery", "Cathedral", "Castle", "GmbH", "AG", "SA", "SARL", "SL", "SpA",
      "Srl", "BV", "NV", "LLP", "PLC", "Hauptbahnhof", "Firma", "Société", "Sociedad", "Società", "Sociedade",
      "Gesellschaft", "Empresa", "Entreprise", "Unternehmen",
      // street words that start an address's own capitalised words: Rue de Rivoli, Paseo de la Castellana
      "Rue", "Calle", "Carrer", "Via", "Viale", "Rua", "Paseo", "Avenida", "Piazza", "Plaza", "Praça", "Quai",
      "Chemin", "Allée", "Corso", "Largo", "Travessa", "Alameda", "Ulica", "Straat", "Laan", "Gracht", "Plein",
      "Cours", "Impasse", "Rambla", "Ronda", "Camino", "Strada", "Platz", "Gasse", "Caddesi", "Sokak");
  private static final Set<String> DETERMINERS = Set.of("the", "The", "der", "die", "das", "Der", "Die", "Das",
      "le", "la", "les", "Le", "La", "Les", "el", "El", "il", "Il", "het", "Het");
  private static final Set<String> PARTICLES = Set.of("de", "van", "von", "der", "den", "da", "di", "del", "della",
      "dos", "das", "do", "du", "le", "la", "ten", "ter", "bin", "al", "el", "y", "zu");
  private static final int NAME_BEFORE = 160;
  private static final int NAME_AFTER = 60;

  private PersonProfiles() {}

  static void find(NormalizedText t, Keywords.Hits hits, Findings f) {
    int last = -1000;
    for (int p : Addresses.anchors(t, hits, f)) {
      if (p - last > 100 && (nameNear(t, p) || Addresses.cjkResidential(t.text(), p))) {
        f.add(PersonalDataKind.PERSON, p, p + 1);
        last = p;
      }
    }
    last = dobs(t, hits, ProfileKeywords.DOB_LABEL, f, last);
    dobs(t, hits, ProfileKeywords.DOB_PHRASE, f, last);
  }

  private static int dobs(NormalizedText t, Keywords.Hits hits, int group, Findings f, int last) {
    String lower = t.lower();
    int reported = last;
    for (int k = 0; k < hits.count(group); k++) {
      int at = hits.start(group, k);
      int from = hits.end(group, k);
      if (from - at <= 4 && Chars.isAsciiLetter(at(lower, from))) {
        continue; // dob, geb. inside a longer word
      }
      if (Math.abs(at - reported) > 100 && dateAfter(t.text(), from, from + 32)
          && (group == ProfileKeywords.DOB_LABEL || nameNear(t, at)) && !f.claimed(at, from)) {
        f.add(PersonalDataKind.PERSON, at, from);
        reported = at;
      }
    }
    return reported;
  }

  private static char at(String s, int i) {
    return i >= 0 && i < s.length() ? s.charAt(i) : ' ';
  }

  /** A date in {@code [from, to)}: a year 1900-2039, or three numbers joined by {@code . / -}. */
  static boolean dateAfter(String s, int from, int to) {
    int end = Math.min(s.length(), to);
    int i = from;
    while (i < end) {
      if (!Chars.isDigit(s.charAt(i)) || (i > 0 && Chars.isDigit(s.charAt(i - 1)))) {
        i++;
        continue;
      }
      int j = i;
      while (j < s.length() && Chars.isDigit(s.charAt(j))) {
        j++;
      }
      if (j - i == 4) {
        int y = Integer.parseInt(s, i, j, 10);
        if (y >= 1900 && y <= 2039) {
          return true;
        }
      }
      if (j - i <= 2 && j + 1 < s.length() && ".-/".indexOf(s.charAt(j)) >= 0 && Chars.isDigit(s.charAt(j + 1))) {
        int k = j + 1;
        while (k < s.length() && Chars.isDigit(s.charAt(k))) {
          k++;
        }
        if (k - j - 1 <= 2 && k + 1 < s.length() && s.charAt(k) == s.charAt(j) && Chars.isDigit(s.charAt(k + 1))) {
          return true;
        }
      }
      i = j;
    }
    return false;
  }

  /** A name label near {@code p}, or two capitalised words before it (after it they are the street's name). */
  static boolean nameNear(NormalizedText t, int p) {
    int from = Math.max(0, p - NAME_BEFORE);
    int to = Math.min(t.length(), p + NAME_AFTER);
    return Chars.near(t.lower(), from, to, NAME_LABELS) || capitalisedPair(t.text(), from, p);
  }

  /** Two capitalised words in a row ({@code Jane Doe}, {@code María José García}), not sentence furniture. */
  static boolean capitalisedPair(String s, int from, int to) {
    int i = from;
    int previousEnd = -10;
    boolean previousName = false;
    boolean skipNext = false;
    while (i < to) {
      char c = s.charAt(i);
      if (!Character.isLetter(c) || (i > 0 && Character.isLetter(s.charAt(i - 1)))) {
        i++;
        continue;
      }
      int j = i + 1;
      while (j < s.length() && Character.isLetter(s.charAt(j))) {
        j++;
      }
      if (PARTICLES.contains(s.substring(i, j)) && previousName && i - previousEnd == 1) {
        previousEnd = j; // Pieter de Vries, Ludwig van Beethoven, Maria da Silva
        i = j;
        continue;
      }
      String word = s.substring(i, j);
      boolean name = j - i >= 2 && Character.isUpperCase(c) && Character.isLowerCase(s.charAt(i + 1))
          && allLowerAfterFirst(s, i, j) && !NOT_NAMES.contains(word);
      if (!name && DETERMINERS.contains(word)) {
        previousName = false; // the White House, der Kölner Dom: a place, not a person
        previousEnd = -10;
        i = j;
        skipNext = true;
        continue;
      }
      if (skipNext) {
        skipNext = false;
        name = false;
      }
      if (name && previousName && i - previousEnd == 1 && (s.charAt(previousEnd) == ' '
          || s.charAt(previousEnd) == '-')) {
        return true;
      }
      previousName = name;
      previousEnd = j;
      i = j;
    }
    return false;
  }

  private static boolean allLowerAfterFirst(String s, int from, int to) {
    for (int k = from + 1; k < to; k++) {
      if (!Character.isLowerCase(s.charAt(k))) {
        return false;
      }
    }
    return true;
  }
}
