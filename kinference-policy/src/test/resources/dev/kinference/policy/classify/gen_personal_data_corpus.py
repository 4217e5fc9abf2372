#!/usr/bin/env python3
"""Generates personal-data-corpus.tsv (issue 21): labelled prompt snippets for PersonalDataCorpusTest.

Every identifier is generated here with a valid check digit (positives) or a deliberately failing one (negatives);
names, streets and accounts are made up, domains are example.com/.org/.net, keys are random. Deterministic (seeded):
run `python3 gen_personal_data_corpus.py > personal-data-corpus.tsv` in this directory to regenerate.
"""
import random
import string
import sys

R = random.Random(21)

# ---- check digits --------------------------------------------------------------------------------------------


def luhn_ok(digits):
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def luhn_complete(prefix, length):
    body = prefix + "".join(R.choice(string.digits) for _ in range(length - len(prefix) - 1))
    for c in string.digits:
        if luhn_ok(body + c):
            return body + c
    raise AssertionError


def luhn_break(digits):
    last = int(digits[-1])
    return digits[:-1] + str((last + R.randint(1, 9)) % 10)


def group(s, sizes, sep=" "):
    out, i = [], 0
    for n in sizes:
        out.append(s[i:i + n])
        i += n
    if i < len(s):
        out.append(s[i:])
    return sep.join(x for x in out if x)


def card(brand="visa"):
    if brand == "visa":
        return luhn_complete("4" + R.choice("0123456789"), 16)
    if brand == "mc":
        return luhn_complete(R.choice(["51", "52", "53", "54", "55", "2221", "2720"]), 16)
    if brand == "amex":
        return luhn_complete(R.choice(["34", "37"]), 15)
    if brand == "discover":
        return luhn_complete("6011", 16)
    raise AssertionError(brand)


def fmt_card(n, sep=" "):
    if len(n) == 15:
        return group(n, [4, 6, 5], sep)
    return group(n, [4, 4, 4, 4], sep)


def iban_check(country, bban):
    rearranged = bban + country + "00"
    num = "".join(str(int(c, 36)) for c in rearranged.upper())
    return "%02d" % (98 - int(num) % 97)


def iban_ok(iban):
    s = iban.replace(" ", "").upper()
    num = "".join(str(int(c, 36)) for c in s[4:] + s[:4])
    return int(num) % 97 == 1


def rnd(chars, n):
    return "".join(R.choice(chars) for _ in range(n))


D = string.digits
U = string.ascii_uppercase

BBAN = {
    "DE": lambda: rnd(D, 18),
    "FR": lambda: fr_bban(),
    "ES": lambda: rnd(D, 20),
    "IT": lambda: R.choice(U) + rnd(D, 10) + rnd(D, 12),
    "NL": lambda: R.choice(["ABNA", "RABO", "INGB", "TRIO"]) + rnd(D, 10),
    "GB": lambda: R.choice(["NWBK", "BARC", "LOYD", "MIDL"]) + rnd(D, 14),
    "PL": lambda: rnd(D, 24),
    "SE": lambda: rnd(D, 20),
    "BR": lambda: rnd(D, 23) + "C1",
    "TR": lambda: rnd(D, 5) + "0" + rnd(D, 16),
    "SA": lambda: rnd(D, 20),
    "AE": lambda: rnd(D, 19),
    "PT": lambda: rnd(D, 21),
    "BE": lambda: rnd(D, 12),
    "AT": lambda: rnd(D, 16),
    "CH": lambda: rnd(D, 17),
    "QA": lambda: "QNBA" + rnd(D, 21),
}


def fr_bban():
    bank, branch, account = rnd(D, 5), rnd(D, 5), rnd(D, 11)
    key = 97 - ((89 * int(bank) + 15 * int(branch) + 3 * int(account)) % 97)
    return bank + branch + account + "%02d" % key


def iban(country):
    bban = BBAN[country]()
    s = country + iban_check(country, bban) + bban
    assert iban_ok(s)
    return s


def iban_bad(country):
    s = iban(country)
    while True:
        t = s[:-1] + R.choice(D)
        if not iban_ok(t):
            return t


def ssn():
    while True:
        area = R.randint(1, 899)
        if area != 666:
            break
    return "%03d-%02d-%04d" % (area, R.randint(1, 99), R.randint(1, 9999))


def nino():
    first = "ABCEGHJKLMNOPRSTWXYZ"
    second = "ABCEGHJKLMNPRSTWXYZ"
    while True:
        p = R.choice(first) + R.choice(second)
        if p not in ("BG", "GB", "KN", "NK", "NT", "TN", "ZZ"):
            break
    d = rnd(D, 6)
    return p + " " + d[0:2] + " " + d[2:4] + " " + d[4:6] + " " + R.choice("ABCD")


def nir(sex=None):
    sex = sex or R.choice("12")
    body = "%s%02d%02d%02d%03d%03d" % (sex, R.randint(50, 99), R.randint(1, 12), R.randint(1, 95),
                                       R.randint(1, 990), R.randint(1, 999))
    key = 97 - int(body) % 97
    return body + "%02d" % key


def fmt_nir(n):
    return group(n, [1, 2, 2, 2, 3, 3, 2])


DNI = "TRWAGMYFPDXBNJZSQVHLCKE"


def dni():
    n = R.randint(10000000, 99999999)
    return "%08d%s" % (n, DNI[n % 23])


def nie():
    p = R.choice("XYZ")
    n = R.randint(1000000, 9999999)
    return "%s%07d%s" % (p, n, DNI[int(str("XYZ".index(p)) + "%07d" % n) % 23])


CF_ODD = [1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23]


def cf_check(s15):
    total = 0
    for i, ch in enumerate(s15):
        v = int(ch) if ch.isdigit() else ord(ch) - 65
        total += CF_ODD[v] if i % 2 == 0 else v
    return chr(65 + total % 26)


def cf(surname3, name3, yy, month, day, town):
    s = "%s%s%02d%s%02d%s" % (surname3, name3, yy, "ABCDEHLMPRST"[month - 1], day, town)
    return s + cf_check(s)


def steuer_id():
    while True:
        double = R.choice(D)
        others = R.sample([d for d in D if d != double], 8)
        digits = others + [double, double]
        R.shuffle(digits)
        if digits[0] == "0":
            continue
        s = "".join(digits)
        return s + steuer_check(s)


def steuer_check(s10):
    product = 10
    for ch in s10:
        total = (int(ch) + product) % 10
        if total == 0:
            total = 10
        product = (total * 2) % 11
    c = 11 - product
    return "0" if c == 10 else str(c)


def steuer_ok(s):
    if len(s) != 11 or s[0] == "0":
        return False
    counts = sorted((s[:10].count(d) for d in set(s[:10])), reverse=True)
    if counts[0] not in (2, 3) or (len(counts) > 1 and counts[1] > 1):
        return False
    return steuer_check(s[:10]) == s[10]


AUSWEIS_CHARS = "0123456789CFGHJKLMNPRTVWXYZ"


def ausweis():
    s = R.choice("LMNPRTVWXY") + rnd(AUSWEIS_CHARS, 8)
    total = sum((int(c, 36)) * (7, 3, 1)[i % 3] for i, c in enumerate(s))
    return s + str(total % 10)


def bsn():
    while True:
        d = [R.randint(1, 9)] + [R.randint(0, 9) for _ in range(7)]
        last = sum(x * (9 - i) for i, x in enumerate(d)) % 11
        if last < 10:
            return "".join(map(str, d + [last]))


def bsn_ok(s):
    return len(s) == 9 and (sum(int(s[i]) * (9 - i) for i in range(8)) - int(s[8])) % 11 == 0


VD = [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 2, 3, 4, 0, 6, 7, 8, 9, 5], [2, 3, 4, 0, 1, 7, 8, 9, 5, 6],
      [3, 4, 0, 1, 2, 8, 9, 5, 6, 7], [4, 0, 1, 2, 3, 9, 5, 6, 7, 8], [5, 9, 8, 7, 6, 0, 4, 3, 2, 1],
      [6, 5, 9, 8, 7, 1, 0, 4, 3, 2], [7, 6, 5, 9, 8, 2, 1, 0, 4, 3], [8, 7, 6, 5, 9, 3, 2, 1, 0, 4],
      [9, 8, 7, 6, 5, 4, 3, 2, 1, 0]]
VP = [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 5, 7, 6, 2, 8, 3, 0, 9, 4], [5, 8, 0, 3, 7, 9, 6, 1, 4, 2],
      [8, 9, 1, 6, 0, 4, 3, 5, 2, 7], [9, 4, 5, 3, 1, 2, 6, 8, 7, 0], [4, 2, 8, 6, 5, 7, 3, 9, 0, 1],
      [2, 7, 9, 3, 8, 0, 6, 4, 1, 5], [7, 0, 4, 6, 9, 1, 3, 2, 5, 8]]
VINV = [0, 4, 3, 2, 1, 5, 6, 7, 8, 9]


def verhoeff_ok(s):
    c = 0
    for i, ch in enumerate(reversed(s)):
        c = VD[c][VP[i % 8][int(ch)]]
    return c == 0


def aadhaar():
    body = str(R.randint(2, 9)) + rnd(D, 10)
    c = 0
    for i, ch in enumerate(reversed(body)):
        c = VD[c][VP[(i + 1) % 8][int(ch)]]
    s = body + str(VINV[c])
    assert verhoeff_ok(s)
    return s


def fmt_aadhaar(s, sep=" "):
    return group(s, [4, 4, 4], sep)


CN_W = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2]


def cn_check(s17):
    return "10X98765432"[sum(int(c) * w for c, w in zip(s17, CN_W)) % 11]


def cnid(want_x=False):
    while True:
        s = "%s%04d%02d%02d%03d" % (R.choice(["110101", "310104", "440305", "510107", "330106", "420106"]),
                                    R.randint(1960, 2004), R.randint(1, 12), R.randint(1, 28), R.randint(1, 999))
        c = cn_check(s)
        if want_x == (c == "X"):
            return s + c


def cpf():
    d = [R.randint(0, 9) for _ in range(9)]
    for n in (10, 11):
        r = sum(x * (n - i) for i, x in enumerate(d)) * 10 % 11
        d.append(0 if r == 10 else r)
    s = "".join(map(str, d))
    return s


def cpf_ok(s):
    d = [int(c) for c in s]
    for n, pos in ((10, 9), (11, 10)):
        r = sum(x * (n - i) for i, x in enumerate(d[:pos])) * 10 % 11
        if (0 if r == 10 else r) != d[pos]:
            return False
    return True


def fmt_cpf(s):
    return "%s.%s.%s-%s" % (s[0:3], s[3:6], s[6:9], s[9:11])


def hexs(n):
    return rnd("0123456789abcdef", n)


def uuid():
    h = hexs(32)
    h = h[:12] + "4" + h[13:16] + R.choice("89ab") + h[17:]
    return "%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20], h[20:])


B62 = string.ascii_letters + string.digits


def jwt():
    import base64
    import json

    def b64(o):
        return base64.urlsafe_b64encode(json.dumps(o, separators=(",", ":")).encode()).decode().rstrip("=")
    head = b64({"alg": "HS256", "typ": "JWT"})
    body = b64({"sub": str(R.randint(10 ** 8, 10 ** 9)), "name": "Test User", "iat": 1717171717})
    return head + "." + body + "." + rnd(B62 + "-_", 43)


def fw(s):
    """Full-width form of ASCII text."""
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in s)


def deva(s):
    return "".join("०१२३४५६७८९"[int(c)] if c.isdigit() else c for c in s)


def arab(s):
    return "".join("٠١٢٣٤٥٦٧٨٩"[int(c)] if c.isdigit() else c for c in s)


# ---- positives ------------------------------------------------------------------------------------------------

P = []


def pos(cat, lang, kinds, text):
    P.append((cat, lang, kinds, text))


# e-mail, plain and in other scripts' sentences
pos("email", "en", "email", "Can you rewrite this so it sounds friendlier? Send complaints to harriet.colville@example.com and I'll handle them.")
pos("email", "de", "email", "Formuliere eine Absage an den Bewerber, seine Adresse ist jonas.brueckner84@example.de, bitte höflich.")
pos("email", "fr", "email", "Peux-tu corriger ce mail ? Mon adresse perso c'est elodie.marchand@example.fr si besoin.")
pos("email", "es", "email", "Redacta un correo para mi casero; mi correo es lucia_ferrer.gil@example.es")
pos("email", "ja", "email", "このメールを丁寧な日本語にしてください。返信先は yamada.haruto@example.jp です。")
pos("email", "zh", "email", "帮我把这封邮件翻译成英文，我的邮箱是 zhang.wei1988@example.cn，谢谢。")
pos("email", "ru", "email", "Напиши ответ клиенту, пусть пишет мне на почту o.smirnova@example.ru")
pos("email", "ar", "email", "اكتب رسالة اعتذار للعميل وأضف بريدي الإلكتروني fatima.alharbi@example.sa في النهاية")
pos("email", "de", "email", "Mein neues Postfach: jürgen.müller@beispiel.example.de – kannst du die Signatur anpassen?")
pos("email", "en", "email", "mailto:tom.okafor+invoices@example.org is where the supplier should send the PDF, draft the instructions")
# obfuscated e-mail
pos("email-obf", "en", "email", "Please don't post it publicly, but my email is john dot doe at gmail dot com — put it in the footer.")
pos("email-obf", "en", "email", "Contact: jane[at]example[dot]org (spam-proofed), can you turn this into a vCard?")
pos("email-obf", "en", "email", "Reach me at jane (at) example (dot) com for the draft, summarise my bio below.")
pos("email-obf", "de", "email", "Schreib mir an k.weber (at) example (punkt) de, ich will das Protokoll haben.")
pos("email-obf", "fr", "email", "Mon adresse : paul.girard arobase example point fr, ajoute-la à la lettre.")
pos("email-obf", "es", "email", "Escríbeme a marta.ruiz arroba example punto com y te mando el resto del CV.")
pos("email-obf", "en", "email", "my address is priya.nair {at} example {dot} net, tidy up this cover letter")
pos("email-obf", "ja", "email", "連絡先はｊｏｈｎ＠ｅｘａｍｐｌｅ．ｃｏｍです。この文章を敬語に直して。")
pos("email-obf", "zh", "email", "我的邮箱：" + fw("li.na") + "＠" + fw("example.com") + "，请帮我写一封求职信。")
pos("email-obf", "nl", "email", "Mijn mail is sanne.devries at example dot nl, kun je deze brief nakijken?")
pos("email-obf", "it", "email", "La mia email è giulia.romano chiocciola example punto it, riscrivi la lettera di presentazione.")
pos("email-obf", "en", "email", "DM me or email rob_hughes AT example DOT co DOT uk, make this message shorter")
# data inside a URL
pos("url", "en", "email", "Why does this image not load? https://cdn.example.com/avatar.png?email=jane.doe%40example.com&size=128")
pos("url", "en", "email", "Debug this tracking link: https://t.example.net/open?u=mike.brennan%40example.org&campaign=spring")
pos("url", "de", "phone", "Der Link https://example.com/rueckruf?tel=%2B4915123456789&name=Kai funktioniert nicht, warum?")
pos("url", "fr", "email", "Ce lien de désinscription marche pas : https://news.example.fr/unsub?mail=claire.dubois@example.fr")

# phones: EU, UK, US, IN, CN, BR, JP, Gulf, RU, TR
pos("phone", "de", "phone", "Bitte ruf mich unter 0151 23456789 zurück, schreib das als freundliche SMS.")
pos("phone", "de", "phone", "Meine Handynummer ist 01512 3456789, formuliere eine Abwesenheitsnotiz damit.")
pos("phone", "de", "phone", "Für Rückfragen: +49 30 12345678 (Büro) oder 0171-2345678 mobil. Mach daraus eine Signatur.")
pos("phone", "de", "phone", "Tel. +49 (0)176 98765432 – kannst du die Visitenkarte auf Englisch übersetzen?")
pos("phone", "en", "phone", "Write a voicemail greeting that says to call me back on (415) 555-0132 after 5pm.")
pos("phone", "en", "phone", "US cell: 212.555.0187, put it into the emergency contact form for my kid's school.")
pos("phone", "en", "phone", "My UK mobile is 07700 900461 — draft a text to the landlord asking about the boiler.")
pos("phone", "en", "phone", "office line +44 20 7946 0321, can you make this email signature look more professional")
pos("phone", "fr", "phone", "Rappelle-moi au 06 12 34 56 78 ou au +33 1 42 68 53 00, rédige le message.")
pos("phone", "fr", "phone", "Mon numéro : 07.81.22.45.90, écris un mot pour la voisine au sujet du colis.")
pos("phone", "es", "phone", "Mi móvil es +34 612 345 678, escribe un anuncio para vender mi bici.")
pos("phone", "es", "phone", "Llámame al 654 32 10 98 cuando llegues, redáctalo más formal.")
pos("phone", "it", "phone", "Il mio cellulare è 333 1234567, scrivi un annuncio per affittare la stanza.")
pos("phone", "it", "phone", "Chiamami al +39 347 765 4321 per il preventivo: riscrivi il messaggio in modo cortese.")
pos("phone", "nl", "phone", "Bel me op 06-12345678 als het pakket er is; maak hier een nette mail van.")
pos("phone", "nl", "phone", "Ons vaste nummer is +31 20 123 4567, zet het onderaan de uitnodiging.")
pos("phone", "pl", "phone", "Mój numer to +48 512 345 678, napisz ogłoszenie o sprzedaży samochodu.")
pos("phone", "sv", "phone", "Ring mig på 070-123 45 67 om du har frågor – skriv om texten till en annons.")
pos("phone", "pt-BR", "phone", "Meu celular é (11) 98765-4321, escreve uma mensagem pro grupo do condomínio.")
pos("phone", "pt-BR", "phone", "WhatsApp +55 21 99876-5432, monta um texto de divulgação da minha loja.")
pos("phone", "hi", "phone", "मेरा मोबाइल नंबर +91 98765 43210 है, इसे शादी के निमंत्रण में जोड़ दो।")
pos("phone", "hi", "phone", "मुझे " + deva("98765 12340") + " पर कॉल करें — यह संदेश अंग्रेज़ी में लिखो।")
pos("phone", "en", "phone", "Indian number for the booking: 098450 12345, write a confirmation SMS.")
pos("phone", "zh", "phone", "我的手机号是13812345678，帮我写一条租房信息。")
pos("phone", "zh", "phone", "联系电话：+86 139 8765 4321 或 010-62345678，请改写成正式的通知。")
pos("phone", "ja", "phone", "携帯は090-1234-5678です。この案内文をもっと丁寧にしてください。")
pos("phone", "ja", "phone", "会社の電話番号は03-6123-4567、" + fw("080-9876-5432") + "は個人用です。署名を作って。")
pos("phone", "ar", "phone", "رقم جوالي 0501234567، اكتب رسالة تهنئة للعملاء بمناسبة العيد.")
pos("phone", "ar", "phone", "للتواصل: +971 50 123 4567 (دبي). صغ إعلان وظيفة قصير.")
pos("phone", "ar", "phone", "هاتفي في الدوحة +974 3312 3456، اكتب رسالة شكر للفريق.")
pos("phone", "ar", "phone", "رقمي " + arab("0551234567") + " أرجو كتابة إعلان لبيع سيارتي.")
pos("phone", "en", "phone", "Saudi office +966 11 234 5678, Qatar +974 4412 3456 — add both to the contact page copy.")
pos("phone", "ru", "phone", "Мой номер +7 916 123-45-67, составь объявление о продаже дивана.")
pos("phone", "ru", "phone", "Звоните по телефону 8 (912) 345-67-89 после 18:00 — перепиши вежливее.")
pos("phone", "tr", "phone", "Cep telefonum 0532 123 45 67, kiralık daire ilanı yazar mısın?")
pos("phone", "tr", "phone", "İletişim: +90 212 345 67 89, bu metni İngilizceye çevir.")

# payment cards
c = [card("visa"), card("mc"), card("amex"), card("visa"), card("discover"), card("mc"), card("visa"), card("mc"),
     card("visa"), card("amex"), card("visa"), card("mc")]
pos("card", "en", "payment-card", "I was charged twice on card " + fmt_card(c[0]) + ", write a dispute letter to the bank.")
pos("card", "en", "payment-card", "card no. " + fmt_card(c[1], ".") + " exp 09/28 — is this the right format for the form?")
pos("card", "en", "payment-card", "Amex " + fmt_card(c[2]) + " got declined at checkout, what could be wrong?")
pos("card", "de", "payment-card", "Meine Kreditkarte " + fmt_card(c[3], "-") + " wurde gesperrt, schreib eine Beschwerde an die Bank.")
pos("card", "fr", "payment-card", "Ma carte bancaire " + c[4] + " a été débitée deux fois, rédige une réclamation.")
pos("card", "es", "payment-card", "La tarjeta " + fmt_card(c[5]) + " no pasa el pago, ¿qué pongo en el correo al banco?")
pos("card", "it", "payment-card", "Carta di credito " + group(c[6], [4, 4, 4, 4], "  ") + ", scadenza 11/27: scrivi il reclamo.")
pos("card", "pt-BR", "payment-card", "Meu cartão " + fmt_card(c[7], ".") + " foi clonado, escreve uma contestação pro banco.")
pos("card", "ja", "payment-card", "クレジットカード番号 " + fmt_card(c[8], "-") + " が使えません。問い合わせ文を書いて。")
pos("card", "zh", "payment-card", "信用卡号 " + fmt_card(c[9]) + " 被盗刷了，帮我写一封投诉信。")
pos("card", "ru", "payment-card", "С карты " + fmt_card(c[10]) + " списали деньги дважды, напиши претензию в банк.")
pos("card", "pl", "payment-card", "Karta " + group(c[11], [4, 4, 4, 4], " - ") + " została obciążona dwa razy, napisz reklamację.")

# IBANs
pos("iban", "de", "iban", "Bitte überweise die Kaution auf " + group(iban("DE"), [4] * 6) + " und formuliere die Erinnerung.")
pos("iban", "de", "iban", "meine iban ist " + iban("DE").lower() + ", schreib das in die Rechnung")
pos("iban", "fr", "iban", "Mon IBAN : " + group(iban("FR"), [4, 4, 4, 4, 4, 4, 3]) + " — rédige la demande de remboursement.")
pos("iban", "es", "iban", "Ponle al cliente mi IBAN " + group(iban("ES"), [2, 2, 4, 4, 2, 10]) + " en la factura.")
pos("iban", "it", "iban", "Il mio IBAN è " + iban("IT") + ", scrivi la mail per il rimborso.")
pos("iban", "nl", "iban", "Maak een betaalverzoek, rekeningnummer " + group(iban("NL"), [4] * 5).lower() + " t.n.v. mij.")
pos("iban", "en", "iban", "Pay the invoice to " + group(iban("GB"), [3, 5, 2, 4, 4, 4]) + " and draft a reminder.")
pos("iban", "pl", "iban", "Numer konta: " + group(iban("PL"), [4, 2, 4, 4, 4, 4, 4, 4]) + ", napisz wezwanie do zapłaty.")
pos("iban", "sv", "iban", "Betala till " + group(iban("SE"), [4] * 6) + " och skriv en påminnelse.")
pos("iban", "pt-BR", "iban", "Para transferência internacional use o IBAN " + iban("BR") + ", escreve o e-mail.")
pos("iban", "tr", "iban", "IBAN numaram " + group(iban("TR"), [4] * 7) + ", kira hatırlatma mesajı yaz.")
pos("iban", "ar", "iban", "رقم الآيبان الخاص بي " + iban("SA") + " اكتب رسالة لطلب استرداد المبلغ.")
pos("iban", "ar", "iban", "حوّل المبلغ إلى " + group(iban("AE"), [4] * 6) + " وصغ رسالة تأكيد.")
pos("iban", "en", "iban", "Swiss account CH" + iban("CH")[2:] + " - is that the right format for a wire?")
pos("iban", "de", "iban", "IBAN: " + group(iban("AT"), [4] * 5).replace(" ", "  ") + " (Österreich), bitte in die Vorlage.")
pos("iban", "pt-BR", "iban", "Conta em Portugal: " + group(iban("PT").lower(), [4] * 7) + " — escreve a mensagem para o senhorio.")

# national identifiers with valid checks
pos("ssn", "en", "national-id", "My SSN is " + ssn() + ", fill in the W-4 example for me.")
pos("ssn", "en", "national-id", "social security number " + ssn().replace("-", "") + " — what box does this go in on the I-9?")
pos("ssn", "en", "national-id", "ssn: " + ssn().replace("-", " ") + ". Write a letter to the SSA about my name change.")
pos("ssn", "en", "national-id", "Employee record: Dana Whitfield, SSN " + ssn().replace("-", "") + ", start date Monday. Draft the welcome email.")
pos("ssn", "es", "national-id", "Mi número de Seguro Social es " + ssn() + ", ayúdame a llenar la solicitud en inglés.")
pos("nino", "en", "national-id", "My National Insurance number is " + nino() + ", write to HMRC about my tax code.")
pos("nino", "en", "national-id", "NI no. " + nino().replace(" ", "") + " - help me fill the student finance form")
pos("nino", "pl", "national-id", "Mój numer NIN w UK to " + nino() + ", napisz list do HMRC po angielsku.")
pos("nir", "fr", "national-id", "Mon numéro de sécu est " + fmt_nir(nir("2")) + ", rédige un courrier pour la CPAM.")
pos("nir", "fr", "national-id", "NIR " + nir("1") + " — peux-tu remplir ce formulaire de mutuelle ?")
pos("nir", "fr", "national-id", "numéro de sécurité sociale : " + nir() + ", fais une lettre de réclamation.")
pos("dni", "es", "national-id", "Mi DNI es " + dni() + ", redacta una autorización para que mi hermano recoja el paquete.")
pos("dni", "es", "national-id", "NIE " + nie() + ", ¿cómo pido la cita para la huella?")
pos("dni", "es", "national-id", "Con DNI " + (lambda d: d[:8] + "-" + d[8])(dni()) + " firmo el contrato; escribe la cláusula de identificación.")
pos("cf", "it", "national-id", "Il mio codice fiscale è " + cf("RSS", "GLI", 88, 4, 52, "H501") + ", compila la delega per il CAF.")
pos("cf", "it", "national-id", "CF " + cf("BNC", "MRC", 79, 11, 3, "F205").lower() + " — scrivi la richiesta all'INPS.")
pos("cf", "en", "national-id", "My Italian tax code " + cf("FRR", "LCU", 92, 7, 15, "L219") + " needs to go on the rental contract, draft it.")
pos("steuerid", "de", "national-id", "Meine Steuer-ID ist " + steuer_id() + ", schreib einen Brief ans Finanzamt.")
sid = steuer_id()
pos("steuerid", "de", "national-id", "Steueridentifikationsnummer " + group(sid, [2, 3, 3, 3]) + " – hilf mir bei der Anlage N.")
pos("steuerid", "de", "national-id", "IdNr.: " + steuer_id() + " (vom Lohnzettel), was muss ich beim Arbeitgeber angeben?")
pos("ausweis", "de", "national-id", "Meine Personalausweisnummer ist " + ausweis() + ", formuliere die Vollmacht für die Post.")
pos("ausweis", "de", "national-id", "Ausweis-Nr. " + ausweis() + " – reicht das für die Anmeldung beim Bürgeramt?")
pos("bsn", "nl", "national-id", "Mijn BSN is " + bsn() + ", schrijf een bezwaarbrief aan de Belastingdienst.")
b = bsn()
pos("bsn", "nl", "national-id", "burgerservicenummer " + b[:4] + "." + b[4:6] + "." + b[6:] + ", vul het formulier voor de huurtoeslag in.")
pos("aadhaar", "hi", "national-id", "मेरा आधार नंबर " + fmt_aadhaar(aadhaar()) + " है, बैंक के लिए आवेदन पत्र लिखो।")
pos("aadhaar", "en", "national-id", "Aadhaar " + aadhaar() + " - write the KYC update request to my bank.")
pos("aadhaar", "hi", "national-id", "आधार: " + fmt_aadhaar(aadhaar(), "-") + " — गैस कनेक्शन के लिए अर्ज़ी बनाओ।")
pos("cnid", "zh", "national-id", "我的身份证号是" + cnid() + "，帮我写一份租房合同的甲方信息。")
pos("cnid", "zh", "national-id", "身份证：" + cnid(want_x=True) + "，请帮我填写这张入职登记表。")
pos("cnid", "en", "national-id", "Chinese ID " + cnid(want_x=True).lower() + " — how do I write it on the visa form?")
pos("cpf", "pt-BR", "national-id", "Meu CPF é " + fmt_cpf(cpf()) + ", escreve uma procuração simples.")
pos("cpf", "pt-BR", "national-id", "CPF " + cpf() + " — monta o e-mail pedindo a segunda via da fatura.")
pos("cpf", "pt-BR", "national-id", "cpf: " + fmt_cpf(cpf()) + " ; nome: Renata Albuquerque. Preenche o cadastro.")

# passports beside the word for passport
pos("passport", "en", "passport", "My passport number is " + rnd(D, 9) + ", help me fill in the ESTA application.")
pos("passport", "de", "passport", "Reisepassnummer " + "C" + rnd(AUSWEIS_CHARS, 8) + " – schreib die Daten für die Hotelbuchung.")
pos("passport", "de", "passport", "Mein Reisepass hat die Nummer C" + rnd(AUSWEIS_CHARS, 8) + ", läuft im Mai ab. Was muss ich tun?")
pos("passport", "fr", "passport", "Numéro de passeport : " + rnd(D, 2) + rnd(U, 2) + rnd(D, 5) + ", rédige la demande de visa.")
pos("passport", "es", "passport", "Mi pasaporte es " + rnd(U, 3) + rnd(D, 6) + ", redacta el correo para la aerolínea.")
pos("passport", "it", "passport", "Il numero del mio passaporto è Y" + rnd(U, 1) + rnd(D, 7) + ", scrivi la mail all'ambasciata.")
pos("passport", "nl", "passport", "Paspoortnummer " + rnd(U, 2) + rnd(U + D, 6) + rnd(D, 1) + ", vul het ESTA-formulier in.")
pos("passport", "pt-BR", "passport", "Meu passaporte é " + rnd(U, 2) + rnd(D, 6) + ", escreve o pedido de visto.")
pos("passport", "pl", "passport", "Numer paszportu " + rnd(U, 2) + rnd(D, 7) + ", napisz wniosek o wizę.")
pos("passport", "ru", "passport", "Мой заграничный паспорт " + rnd(D, 2) + " " + rnd(D, 7) + ", заполни анкету на визу.")
pos("passport", "ru", "passport", "паспорт серия " + rnd(D, 2) + " " + rnd(D, 2) + " номер " + rnd(D, 6) + ", составь доверенность.")
pos("passport", "zh", "passport", "我的护照号码是E" + rnd(D, 8) + "，请帮我写签证申请信。")
pos("passport", "ja", "passport", "パスポート番号はT" + rnd(U, 1) + rnd(D, 7) + "です。ビザ申請の書類を作ってください。")
pos("passport", "ar", "passport", "رقم جواز السفر " + rnd(U, 1) + rnd(D, 8) + "، اكتب طلب تأشيرة.")
pos("passport", "tr", "passport", "Pasaport numaram U" + rnd(D, 8) + ", vize başvuru mektubu yazar mısın?")
pos("passport", "hi", "passport", "मेरा पासपोर्ट नंबर " + rnd(U, 1) + rnd(D, 7) + " है, वीज़ा के लिए पत्र लिखो।")
pos("passport", "sv", "passport", "Mitt passnummer är " + rnd(D, 8) + ", skriv ett mejl till ambassaden.")
pos("passport", "en", "passport", "passport no: " + rnd(U, 2) + rnd(D, 7) + " exp 2031-04-30, format this for the visa form")

# a person's name with a postal address or date of birth
pos("person-addr", "en", "person", "Write a cover letter for Harriet Colville, 14 Alder Grove, Leeds LS6 2QT, applying for the librarian job.")
pos("person-addr", "en", "person", "Ship to: Marcus Delaney, 2218 Pinecrest Ave, Apt 4B, Portland, OR 97214. Draft the return label note.")
pos("person-addr", "de", "person", "Absender: Jonas Brückner, Lindenstraße 14, 10969 Berlin. Schreib eine Kündigung für meinen Handyvertrag.")
pos("person-addr", "de", "person", "Bitte eine Wohnungsbewerbung für Katrin Vogelsang, wohnhaft Am Mühlbach 3a, 79098 Freiburg.")
pos("person-addr", "fr", "person", "Rédige une lettre de résiliation pour Élodie Marchand, 27 rue des Tanneurs, 69002 Lyon.")
pos("person-addr", "es", "person", "Carta de reclamación de Lucía Ferrer Gil, calle de Alcalá 112, 3º B, 28009 Madrid.")
pos("person-addr", "it", "person", "Scrivi una disdetta per Giulia Romano, via Garibaldi 45, 10122 Torino.")
pos("person-addr", "nl", "person", "Maak een opzegbrief voor Sanne de Vries, Prinsengracht 263-2, 1016 GV Amsterdam.")
pos("person-addr", "pt-BR", "person", "Escreve uma carta de apresentação para Renata Albuquerque, Rua Augusta 1500, ap. 82, São Paulo - SP, 01304-001.")
pos("person-addr", "pl", "person", "Napisz wypowiedzenie umowy dla Anny Kowalczyk, ul. Długa 17/4, 31-147 Kraków.")
pos("person-addr", "ru", "person", "Составь заявление от Ольги Смирновой, проживающей по адресу: г. Москва, ул. Профсоюзная, д. 84, кв. 112.")
pos("person-addr", "zh", "person", "请以王丽华的名义写一封投诉信，地址：上海市徐汇区漕溪北路88号5号楼1203室。")
pos("person-addr", "ja", "person", "佐藤健一、〒150-0041 東京都渋谷区神南1-2-3 コーポ神南302号 宛の送り状を作ってください。")
pos("person-addr", "ar", "person", "اكتب خطاب شكوى باسم فاطمة الحربي، حي العليا، شارع التحلية، مبنى 12، الرياض 12241.")
pos("person-addr", "tr", "person", "Mehmet Yıldırım adına, Bağdat Caddesi No: 214 D: 7, Kadıköy/İstanbul adresiyle bir dilekçe yaz.")
pos("person-addr", "hi", "person", "राहुल शर्मा, मकान नं. 42, सेक्टर 15, गुरुग्राम, हरियाणा 122001 के नाम से किराया अनुबंध लिखो।")
pos("person-addr", "sv", "person", "Skriv en uppsägning för Erik Lindqvist, Storgatan 12 B, 114 51 Stockholm.")
pos("person-dob", "en", "person", "Fill in the form: name Dana Whitfield, date of birth 03/14/1987, and write a short bio.")
pos("person-dob", "en", "person", "Patient: Tom Okafor, DOB 1979-11-02. Summarise his discharge notes in plain English.")
pos("person-dob", "de", "person", "Schreib eine Vollmacht für Katrin Vogelsang, geboren am 12.05.1984, für die Abholung beim Amt.")
pos("person-dob", "fr", "person", "Paul Girard, né le 4 juillet 1990 à Nantes : rédige son CV en anglais.")
pos("person-dob", "es", "person", "Marta Ruiz Ortega, nacida el 23/09/1995, solicita la beca; redacta la carta de motivación.")
pos("person-dob", "it", "person", "Marco Bianchi, nato il 3 novembre 1979 a Milano, chiede un certificato: scrivi la domanda.")
pos("person-dob", "nl", "person", "Pieter Jansen, geboren op 8 februari 1972, wil zijn pensioen aanvragen. Schrijf de brief.")
pos("person-dob", "pt-BR", "person", "Ana Beatriz Souza, nascida em 17/06/2001 — escreve uma declaração de matrícula.")
pos("person-dob", "pl", "person", "Jan Nowak, ur. 21.03.1968 w Poznaniu – przygotuj pełnomocnictwo.")
pos("person-dob", "ru", "person", "Иванов Сергей Петрович, дата рождения 15.08.1982, напиши характеристику с места работы.")
pos("person-dob", "zh", "person", "张伟，出生日期1988年4月12日，请帮我写一份个人简历的开头。")
pos("person-dob", "ja", "person", "山田花子（1992年7月8日生まれ）の履歴書の自己紹介文を書いてください。")
pos("person-dob", "ar", "person", "محمد العتيبي، تاريخ الميلاد 1990/05/21، اكتب له خطاب توصية.")
pos("person-dob", "tr", "person", "Ayşe Demir, doğum tarihi 09.12.1993, için bir referans mektubu yaz.")
pos("person-dob", "hi", "person", "प्रिया नायर, जन्म तिथि 14/02/1996, के लिए नौकरी का आवेदन पत्र लिखो।")
pos("person-dob", "sv", "person", "Erik Lindqvist, född 1985-10-30, behöver ett intyg till försäkringskassan. Skriv det.")

# secrets
pos("secret", "en", "secret", "Why does this fail with 401? client = OpenAI(api_key=\"sk-proj-" + rnd(B62, 48) + "\")")
pos("secret", "en", "secret", "ANTHROPIC_API_KEY=sk-ant-api03-" + rnd(B62 + "-_", 93) + "AA is in my .env, is the syntax right?")
pos("secret", "en", "secret", "aws configure keeps failing: aws_access_key_id = AKIA" + rnd(U + "234567", 16) + " region eu-central-1")
pos("secret", "en", "secret", "git push says auth failed, I set the remote to https://ghp_" + rnd(B62, 36) + "@github.com/acme/app.git")
pos("secret", "en", "secret", "Decode this token and tell me when it expires: " + jwt())
pos("secret", "en", "secret", "Is this key in the right format for paramiko?\\n-----BEGIN OPENSSH PRIVATE KEY-----\\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\\n-----END OPENSSH PRIVATE KEY-----")
pos("secret", "en", "secret", "nginx won't start: ssl_certificate_key contains -----BEGIN EC PRIVATE KEY----- MHcCAQEEI" + rnd(B62, 40))
pos("secret", "de", "secret", "Warum geht der Webhook nicht? SLACK_TOKEN=xoxb-" + rnd(D, 12) + "-" + rnd(D, 13) + "-" + rnd(B62, 24))
pos("secret", "fr", "secret", "Mon script Stripe plante : stripe.api_key = 'sk_live_" + rnd(B62, 24) + "', tu vois pourquoi ?")
pos("secret", "es", "secret", "El CI falla con este token: glpat-" + rnd(B62 + "-_", 20) + " ¿qué permisos le faltan?")
pos("secret", "ja", "secret", "このコードのエラーを直して: genai.configure(api_key=\"AIza" + rnd(B62 + "-_", 35) + "\")")
pos("secret", "zh", "secret", "为什么下载模型报错？HF_TOKEN=hf_" + rnd(B62, 34))
pos("secret", "pt-BR", "secret", "o npm publish dá erro, meu .npmrc tem //registry.npmjs.org/:_authToken=npm_" + rnd(B62, 36))
pos("secret", "en", "secret", "fine-grained token github_pat_" + rnd(B62, 22) + "_" + rnd(B62, 59) + " can't push to main, why?")
pos("secret", "en", "secret", "DATABASE_URL=postgres://app_admin:Vq7%23kP2mZx9Lr@db.internal.example.com:5432/prod — why does prisma reject it?")
pos("secret", "ru", "secret", "Почему не работает? headers = {\"Authorization\": \"Bearer " + jwt() + "\"}")

# mixed: several kinds in one paragraph
pos("mixed", "en", "email,phone", "Update my resume header: Priya Nair | priya.nair@example.net | +44 7700 900982 | Manchester")
pos("mixed", "de", "iban,email", "Rechnung an buchhaltung.mueller@example.de, zahlbar auf " + group(iban("DE"), [4] * 6) + ". Formuliere die Mahnung.")
pos("mixed", "fr", "person,phone", "Lettre pour Claire Dubois, 8 avenue Jean Jaurès, 31000 Toulouse, tél. 06 98 76 54 32.")
pos("mixed", "es", "national-id,phone", "Datos del inquilino: DNI " + dni() + ", móvil 699 123 456. Redacta el contrato.")
pos("mixed", "zh", "phone,national-id", "客户信息：手机15912345678，身份证" + cnid() + "，请整理成表格。")

# more of the forms that were missed before issue 21
pos("phone", "de", "phone", "Handy: 0160 9876543, Festnetz 089 12345678 – bitte in die Einladung zur Feier.")
pos("phone", "de", "phone", "Kannst du 0176-55512345 als Kontakt im Aushang für die Nachhilfe eintragen?")
pos("phone", "de", "phone", "Ruf doch mal Tante Gisela an, ihre Nummer ist 01573 1234567, und schreib ihr was Nettes zum Geburtstag.")
pos("phone", "de", "phone", "Meine Nummer in der Schweiz ist +41 79 123 45 67, in Österreich 0664 1234567. Formuliere die Signatur.")
pos("phone", "fr", "phone", "En Belgique, joignable au +32 470 12 34 56 ; au Portugal, +351 912 345 678. Fais une carte de visite.")
pos("phone", "en", "phone", "Text me on +1-646-555-0174 when the package arrives, and make this note sound less passive-aggressive.")
pos("phone", "en", "phone", "Call the tenant at 07911 123456 about the leak; please turn my notes into a formal letter.")
pos("phone", "hi", "phone", "मेरा नंबर 91-9812345670 है, इसे दुकान के पोस्टर में डाल दो।")
pos("phone", "zh", "phone", "请把我的电话 186-0123-4567 加到名片上，再翻译成英文。")
pos("phone", "ja", "phone", "自宅 06-6123-4567、携帯 +81 80 1234 5678。年賀状の差出人欄を作って。")
pos("phone", "pt-BR", "phone", "Fixo (21) 3456-7890, celular 11 91234-5678 — coloca no rodapé do orçamento.")
pos("phone", "ar", "phone", "اتصل بي على 00966 55 123 4567 بخصوص الشقة، وصغ الإعلان بشكل رسمي.")
pos("email-obf", "de", "email", "Meine Mail: anna punkt schmidt ät example punkt de – bitte in den Lebenslauf.")
pos("email-obf", "en", "email", "Send the slides to d.kowalski at example.org (no spam please) and summarise the thread.")
pos("email-obf", "ru", "email", "Почта: ivan.petrov собака example.ru, добавь её в подпись.")
pos("email-obf", "pt-BR", "email", "meu email é joao.silva arroba example ponto com ponto br, revisa minha carta")
pos("email-obf", "en", "email", "email: mike&#64;example&#46;com — can you put this in my HTML footer properly?")
pos("ssn", "en", "national-id", "SSN " + ssn().replace("-", "") + " and DOB on file; write the letter asking the IRS for a transcript.")
pos("ssn", "en", "national-id", "my social is " + ssn() + ", the bank wants it on the form, which field?")
pos("nino", "en", "national-id", "National Insurance: " + nino() + " — rewrite my email to the payroll team.")
pos("card", "en", "payment-card", "card: " + card("visa") + " cvv 123 — is it safe to store this in my notes app?")
pos("card", "nl", "payment-card", "Mijn creditcard " + fmt_card(card("mc"), " ") + " is geblokkeerd, schrijf een bericht aan de bank.")
pos("card", "tr", "payment-card", "Kart numaram " + fmt_card(card("visa"), "-") + ", iade talebi yazar mısın?")
pos("iban", "nl", "iban", "IBAN " + iban("BE").lower() + " (Belgische rekening), zet het in de factuur.")
pos("iban", "it", "iban", "Bonifico a " + group(iban("IT"), [4, 4, 4, 4, 4, 4, 3]).lower() + ", scrivi il promemoria per il condominio.")
pos("iban", "ar", "iban", "رقم الحساب الدولي " + group(iban("QA"), [4] * 8) + " لإتمام التحويل، اكتب الرسالة.")
pos("person-addr", "en", "person", "Draft a noise complaint from Olivia Brandt, Flat 3, 27 Hawthorn Road, Bristol BS7 8QE, to the council.")
pos("person-addr", "it", "person", "Mittente: Luca Ferrari, Corso Vittorio Emanuele II 118, 80121 Napoli. Scrivi un reclamo.")
pos("person-dob", "en", "person", "Write a birthday card for my grandson Oliver Pratt, born 2 June 2016, and mention his school.")
pos("person-dob", "de", "person", "Lebenslauf: Max Hofmann, geb. 03.09.1991 in Kassel. Formuliere das Profil.")
pos("passport", "en", "passport", "Booking needs my passport: " + rnd(U, 1) + rnd(D, 8) + ", nationality UAE. Write the email to the agent.")
pos("passport", "es", "passport", "Número de pasaporte " + rnd(U, 3) + rnd(D, 6) + " — ¿lo pongo así en el formulario del hotel?")
pos("secret", "it", "secret", "Perché non funziona? export OPENAI_API_KEY=sk-" + rnd(B62, 48))
pos("secret", "nl", "secret", "Mijn deploy faalt: AWS_SECRET_ACCESS_KEY=" + rnd(B62 + "/+", 40) + " AWS_ACCESS_KEY_ID=AKIA" + rnd(U + "234567", 16))
pos("cnid", "zh", "national-id", "帮我核对一下身份证号码 " + (lambda x: x[:6] + " " + x[6:14] + " " + x[14:])(cnid()) + " 对应的出生日期和地区。")

# ---- negatives ------------------------------------------------------------------------------------------------

N = []


def neg(cat, lang, text):
    N.append((cat, lang, "", text))


# UUIDs
neg("uuid", "en", "Why does Postgres reject this uuid: " + uuid() + "? The column is of type uuid.")
neg("uuid", "en", "Request " + uuid() + " failed with 503 after 30012 ms, what does the trace mean?")
neg("uuid", "de", "Die Korrelations-ID " + uuid() + " taucht zweimal im Log auf – woran kann das liegen?")
neg("uuid", "en", "kubectl get pod -o yaml shows uid: " + uuid() + " — is that stable across restarts?")
neg("uuid", "ja", "このUUID " + uuid().upper() + " をバイト配列に変換するJavaコードを書いて。")
neg("uuid", "en", "{\"tenant\":\"" + uuid() + "\",\"tokens\":4096,\"latency_ms\":812} parse this in Go")
neg("uuid", "fr", "Mon UUID " + uuid() + " fait 36 caractères, combien en binaire ?")
neg("uuid", "en", "GUID {" + uuid().upper() + "} appears in the registry under HKLM\\\\SOFTWARE\\\\Classes\\\\CLSID, what is it?")
# hashes and commit ids
neg("hash", "en", "Verify the download: sha256 " + hexs(64) + " — write the shell command.")
neg("hash", "en", "md5sum prints " + hexs(32) + "  backup.tar.gz, is the file intact?")
neg("hash", "en", "git show " + hexs(40) + " says 'bad object', how do I recover?")
neg("hash", "en", "Revert commit " + hexs(7) + " and " + hexs(12) + " but keep the migration, give me the git commands.")
neg("hash", "de", "Der Build auf Commit " + hexs(40) + " ist grün, der davor rot. Wie bisecte ich das?")
neg("hash", "en", "docker pull ghcr.io/acme/api@sha256:" + hexs(64) + " fails with manifest unknown")
neg("hash", "en", "\"integrity\": \"sha512-" + rnd(B62 + "+/", 86) + "==\" in package-lock.json changed, is that a problem?")
neg("hash", "zh", "这个SHA-1值 " + hexs(40) + " 是哪个文件的？怎么在仓库里查。")
neg("hash", "en", "bcrypt hash $2b$12$" + rnd(B62 + "./", 53) + " — how many rounds is this?")
neg("hash", "ru", "Почему git выдаёт 'fatal: reference is not a tree: " + hexs(40) + "'?")
# timestamps and log lines
neg("log", "en", "2024-01-02 10:00:03,512 INFO  [main] o.a.c.Server - Started in 4.213 s (JVM running for 5.02) — why so slow?")
neg("log", "en", "Explain this: 2025-03-14T09:26:53.589+01:00 WARN pool-3-thread-7 retry 3/5 after 1500ms")
neg("log", "en", "[2024-06-30 23:59:59.999 UTC] GET /v1/chat/completions 200 1843ms 4096B — is 1.8 s normal?")
neg("log", "en", "Nov 12 04:17:22 web-01 sshd[21473]: Connection closed by 203.0.113.45 port 51234 [preauth] — attack?")
neg("log", "en", "127.0.0.1 - - [10/Oct/2023:13:55:36 -0700] \"GET /index.html HTTP/1.1\" 200 2326 parse with awk")
neg("log", "de", "Im Log steht: 14.02.2024 08:15:42 FEHLER Zeitüberschreitung nach 30000 ms bei Job 48213. Was tun?")
neg("log", "fr", "Le cron tourne à 0 3 * * 1-5 mais le log indique 2024-09-01T03:00:01Z puis 03:12:45Z, pourquoi 12 minutes ?")
neg("log", "en", "level=error ts=2024-11-05T17:42:10.123456789Z caller=main.go:214 msg=\"context deadline exceeded\" duration=10.000512s")
neg("log", "en", "E1105 17:42:10.123456   10234 reflector.go:138] watch of *v1.Pod ended with: too old resource version: 48213377 (48215520)")
neg("log", "ja", "ログに 2024/04/01 09:00:00.123 [WARN] GC pause 1234ms と出ます。原因は？")
neg("log", "en", "unix timestamp 1717171717 and 1717171717123 in ms: convert both to ISO 8601 in Python")
neg("log", "en", "Apr 03 2024 14:22:07.481 tx=884213 commit took 2.31ms, p99 18.4ms, p999 212.9ms — is the tail bad?")
neg("log", "es", "El job empezó 2024-02-29 23:58:00 y terminó 2024-03-01 00:03:17; ¿cuántos segundos duró?")
neg("log", "en", "Time range 09:00-17:30 Mon-Fri, SLA 99.95% → how many minutes of downtime per month?")
neg("log", "zh", "日志：2024-05-20 13:14:15.926 [http-nio-8080-exec-12] ERROR 耗时 5230ms，怎么优化？")
neg("log", "en", "Heap dump at 2024-08-08_081530: 1048576 objects, 268435456 bytes retained, what is leaking?")
# versions and builds
neg("version", "en", "Upgrade from 2.7.18 to 3.2.5 broke my app, what changed in Spring Boot 3?")
neg("version", "en", "Which is newer: 1.10.0-rc.2+build.20240315 or 1.9.12? Explain semver precedence.")
neg("version", "en", "Android versionCode 2024031501, versionName 5.12.3 — how should I bump them?")
neg("version", "de", "Wir haben Kernel 6.8.0-45-generic und Treiber 550.107.02; ist das kompatibel mit CUDA 12.4?")
neg("version", "en", "Windows 10 build 19045.4291 and KB5036892 — does the update fix the VPN bug?")
neg("version", "en", "<dependency><groupId>org.example</groupId><artifactId>core</artifactId><version>4.13.2</version></dependency> why not resolved?")
neg("version", "ja", "Python 3.12.4 と numpy 2.0.1 で ImportError が出ます。")
neg("version", "en", "Chrome 124.0.6367.201 vs 124.0.6367.118: what's the difference?")
neg("version", "en", "Jenkins build #48213 took 00:14:52; build #48214 took 00:31:07. Why double?")
# stack traces and code
neg("trace", "en", "Exception in thread \"main\" java.lang.NullPointerException\\n\\tat com.example.OrderService.total(OrderService.java:142)\\n\\tat com.example.Main.main(Main.java:27)\\nWhat's wrong?")
neg("trace", "en", "Traceback (most recent call last):\\n  File \"/srv/app/worker.py\", line 2187, in run\\n    x = rows[10240]\\nIndexError: list index out of range")
neg("trace", "en", "panic: runtime error: index out of range [5] with length 5\\n\\ngoroutine 1 [running]:\\nmain.main()\\n\\t/home/dev/app/main.go:14 +0x1d")
neg("trace", "en", "Segfault at 0x00007f3a2c4b1e80 ip 0x000055d1c0a3b2f4 sp 00007ffd5c2e1a30 error 4 in app[55d1c0a00000+4b000]")
neg("trace", "en", "Windows says error 0x80070005 and event ID 7034, service crashed 3 times. How to debug?")
neg("code", "en", "Why is this slow? for (int i = 0; i < 1000000; i++) { sum += i * 31 % 1000003; }")
neg("code", "en", "const PORT = 8080; const RANGE = '10000-20000'; explain what this docker-compose port mapping 10000-20000:10000-20000/udp does")
neg("code", "en", "In CSS, what's the difference between #1e90ff, rgb(30, 144, 255) and hsl(210 100% 56%)?")
neg("code", "en", "SELECT id, total FROM orders WHERE created_at > '2024-01-01' AND total BETWEEN 100 AND 5000 LIMIT 50 OFFSET 200;")
neg("code", "en", "@Override public int hashCode() { return 31 * 17 + Objects.hashCode(id); } is this a good hash?")
neg("code", "en", "What does @media (min-width: 768px) and (max-width: 1024px) do? Also @import url(theme.css)")
neg("code", "en", "npm install @types/node@20.11.30 @angular/core@17.3.1 — peer dependency conflict, help")
neg("code", "en", "Python: @app.route('/users/<int:user_id>') returns 404 for /users/00123, why?")
neg("code", "en", "printf(\"%08x\\\\n\", 0xDEADBEEF); prints deadbeef — how to add 0x prefix?")
neg("code", "en", "numpy.random.seed(1234567890); arr = np.arange(0, 4096).reshape(64, 64) — what's arr[63, 63]?")
neg("code", "en", "regex \\\\d{3}-\\\\d{2}-\\\\d{4} to validate an SSN field — does it reject 000?")
neg("code", "en", "Write a Luhn check in Rust, no example numbers please, just the function.")
neg("code", "de", "Wie schreibe ich in Java einen IBAN-Validator mit BigInteger.mod(97)? Ohne Beispiel-IBAN.")
# git remotes and user@host that is not a person's mailbox
neg("remote", "en", "git clone git@github.com:acme-corp/inference-router.git fails with permission denied (publickey)")
neg("remote", "en", "How do I switch origin from https://github.com/acme/app.git to ssh://git@gitlab.com:2222/platform/app.git?")
neg("remote", "en", "Remote is git@bitbucket.org:team/monorepo.git, how do I add a second push URL?")
neg("remote", "de", "git remote -v zeigt origin git@gitlab.example.com:infra/terraform.git (fetch), wie ändere ich den Port?")
neg("remote", "en", "ssh deploy@10.20.30.40 -p 2222 hangs, but ssh root@localhost works. Firewall?")
neg("remote", "en", "Postfix keeps sending mail from root@localhost and MAILER-DAEMON@localhost.localdomain, how do I rewrite the sender?")
neg("remote", "en", "scp build.tar.gz ci@build-agent-07:/opt/releases/2024.06.1/ is slow, alternatives?")
neg("remote", "en", "pip install git+ssh://git@github.com/acme/tools.git@v1.4.2#egg=tools doesn't work")
# IP and MAC addresses
neg("ip", "en", "Is 192.168.178.1 or 10.0.0.138 the right gateway for a Fritzbox? Subnet 255.255.255.0.")
neg("ip", "en", "CIDR 172.16.0.0/12 vs 10.0.0.0/8: which overlaps with 172.31.255.254?")
neg("ip", "en", "IPv6 2001:db8:85a3::8a2e:370:7334 and fe80::1ff:fe23:4567:890a%eth0 — which is link-local?")
neg("ip", "de", "Der Server lauscht auf 0.0.0.0:8443 und 127.0.0.1:9090, warum kann ich von 198.51.100.23 nicht zugreifen?")
neg("ip", "en", "nginx upstream servers 10.1.2.3:8000 10.1.2.4:8000 10.1.2.5:8000 max_fails=3 fail_timeout=30s, explain")
neg("ip", "en", "Why does ping 8.8.8.8 work but ping 2606:4700:4700::1111 times out?")
neg("ip", "en", "MAC address 00:1A:2B:3C:4D:5E vs 3c-22-fb-12-34-56: how do I tell the vendor from the OUI?")
neg("ip", "zh", "为什么 192.168.1.100 和 192.168.1.101 互相 ping 不通？网关是 192.168.1.1。")
neg("ip", "en", "wg0 interface: Address = 10.8.0.2/24, Endpoint = 203.0.113.7:51820, AllowedIPs = 0.0.0.0/0")
# product codes, orders, tracking, invoices, ISBNs
neg("product", "en", "Compare SKU WH-1000XM5/B and WH-1000XM4/S: which has better ANC?")
neg("product", "en", "The part number 0-04-130-1102 (bosch 0 986 424 797) fits which brake caliper?")
neg("product", "de", "Artikelnummer 4011905436120 (EAN) und Art.-Nr. 73.215.44 – sind das dieselben Schrauben?")
neg("product", "en", "EAN-13 5901234123457 and UPC 036000291452: write code to validate both.")
neg("product", "en", "Model number RTX-4090-24G-OC vs 900-1G136-2530-000, which board is reference?")
neg("product", "ja", "型番 KJ-55X90L と XRJ-55A90J はどちらが新しいですか？")
neg("product", "en", "Intel i7-13700K, SKU BX8071513700K, spec code SRMB8 — is it still on sale?")
neg("order", "en", "Order #112-4839201-5527316 hasn't shipped in 9 days, draft a polite complaint to the seller.")
neg("order", "en", "My order number is 200045781296 and the return label says RMA-2024-08812. Write the return note.")
neg("order", "de", "Bestellnummer 302-9983716-4410733 ist nicht angekommen, schreib eine Reklamation an den Shop.")
neg("order", "fr", "Ma commande n° FR-2024-0043817 est arrivée cassée, rédige la demande de retour.")
neg("order", "es", "El pedido 8410023571 llegó incompleto, ¿cómo lo reclamo?")
neg("order", "zh", "订单号 2024031512345670 一直显示待发货，帮我写一条催单消息。")
neg("order", "pt-BR", "Pedido nº 1389457720-01 ainda não chegou, escreve uma reclamação educada pra loja.")
neg("order", "it", "Ordine n. 4500123987 del 12/03/2024, scrivi un sollecito al fornitore.")
neg("tracking", "en", "UPS tracking 1Z999AA10123456784 says 'label created' for 5 days, what does that mean?")
neg("tracking", "en", "DHL Express waybill 1234567890 and DHL parcel JJD0000390012345678: which site do I use?")
neg("tracking", "de", "Sendungsnummer 00340434161094042557 bei DHL zeigt nichts an. Was tun?")
neg("tracking", "en", "USPS 9400 1000 0000 0000 0000 00 shows 'in transit, arriving late' – write a message to the buyer.")
neg("tracking", "en", "FedEx tracking 7946 1234 5670 is stuck in Memphis, is that normal?")
neg("tracking", "ru", "Трек-номер RA123456785CN висит в Шереметьево уже неделю, что делать?")
neg("invoice", "en", "Invoice INV-2024-000813 total 1,249.00 EUR incl. 19% VAT — rewrite the payment reminder.")
neg("invoice", "de", "Rechnung Nr. 2024-10-0457 vom 01.10.2024 über 3.480,00 € ist überfällig, formuliere die Mahnung.")
neg("invoice", "fr", "Facture F2024-00391, montant 742,50 € TTC, échéance 30 jours : écris la relance.")
neg("invoice", "en", "PO 4500098321, GL account 610200, cost centre 1004 — how do I book this?")
neg("isbn", "en", "Is ISBN 978-3-16-148410-0 the same book as 3-16-148410-X?")
neg("isbn", "en", "cite the book with ISBN 9780262033848 in APA format")
neg("isbn", "de", "ISBN 978-3-446-26226-8 – gibt es das Buch als E-Book?")
neg("isbn", "en", "DOI 10.1038/s41586-021-03819-2 and arXiv:2305.18290 — summarise both papers.")
# long numbers failing the relevant check
for i, (lang, tmpl) in enumerate([
        ("en", "Test card {} is rejected by Stripe test mode, why? (It's a made-up number.)"),
        ("en", "Our loyalty card number {} is printed on the back, how do I link it in the app?"),
        ("de", "Die Kundennummer {} hat 16 Stellen, wie speichere ich sie am besten in Postgres?"),
        ("en", "Gift card code {} doesn't redeem, what's the support process?"),
        ("ja", "会員番号 {} を桁区切りで表示するにはどうすればいいですか？"),
        ("en", "Batch id {} from the ETL — how to partition by its first four digits?")]):
    n = luhn_break(card("visa" if i % 2 == 0 else "mc"))
    assert not luhn_ok(n)
    neg("bad-luhn", lang, tmpl.format(fmt_card(n) if i % 2 == 0 else n))
for lang, tmpl, country in [
        ("en", "Validator says {} is invalid — what's wrong with the check digits?", "DE"),
        ("de", "Warum lehnt die Bank {} ab? Die Prüfziffer stimmt wohl nicht.", "DE"),
        ("fr", "L'IBAN de test {} est rejeté par mon code, normal ?", "FR"),
        ("en", "Sample IBAN in our docs, {}, fails mod 97 — suggest a fix to the docs.", "GB"),
        ("nl", "Mijn validatie keurt {} af, klopt het controlegetal niet?", "NL")]:
    neg("bad-iban", lang, tmpl.format(group(iban_bad(country), [4] * 7)))
for lang, tmpl in [("de", "Die Zahl {} hat 11 Stellen, ist das eine gültige Steuer-ID? Ich glaube nicht."),
                   ("en", "Job id {} keeps failing in the scheduler."),
                   ("de", "Kundenkonto {} wurde gesperrt, wie formuliere ich den Widerspruch?")]:
    while True:
        n = str(R.randint(10 ** 10, 10 ** 11 - 1))
        if not steuer_ok(n):
            break
    neg("bad-steuerid", lang, tmpl.format(n))
neg("bad-ssn", "en", "Is 000-12-3456 a valid SSN format? Our form accepted it.")
neg("bad-ssn", "en", "Why is 666-45-1234 rejected by the validator? Area 666 is never issued.")
neg("bad-ssn", "en", "Example SSNs like 987-65-4321 are reserved for ads — list the other never-issued ranges.")
while True:
    n = str(R.randint(10 ** 8, 10 ** 9 - 1))
    if not bsn_ok(n):
        break
neg("bad-bsn", "nl", "Ons klantnummer " + n + " lijkt op een BSN maar is het niet; hoe maak ik dat duidelijk in de UI?")
while True:
    n = str(R.randint(2 * 10 ** 11, 10 ** 12 - 1))
    if not verhoeff_ok(n):
        break
neg("bad-aadhaar", "en", "Transaction reference " + fmt_aadhaar(n) + " for the UPI payment, explain the format.")
while True:
    n = str(R.randint(2 * 10 ** 11, 10 ** 12 - 1))
    if not verhoeff_ok(n):
        break
neg("bad-aadhaar", "hi", "ऑर्डर आईडी " + n + " का रिफ़ंड नहीं आया, शिकायत लिखो।")
while True:
    s = cnid()
    s = s[:17] + ("0" if s[17] != "0" else "1")
    if not luhn_ok(s):
        break
neg("bad-cnid", "zh", "这个18位编号 " + s + " 校验位不对，用Python怎么校验？")
s = cpf()
neg("bad-cpf", "pt-BR", "O número " + fmt_cpf(s[:9] + str((int(s[9]) + 1) % 10) + s[10]) + " é rejeitado no cadastro, o dígito verificador está errado?")
d = dni()
neg("bad-dni", "es", "El número 12345678A tiene la letra mal, ¿cómo se calcula la letra del DNI?")
# math, prices, quantities, durations
neg("math", "en", "What is 123456789 * 987654321? Show the long multiplication.")
neg("math", "en", "Solve for x: 3x^2 - 12x + 9 = 0, and evaluate at x = 0.0001234.")
neg("math", "en", "Is 2147483647 prime? And 4294967291?")
neg("math", "de", "Berechne 15 % von 2.349,90 € und runde auf zwei Nachkommastellen.")
neg("math", "en", "Sum the series 1 + 1/2 + 1/4 + ... and give pi to 30 digits: 3.141592653589793238462643383279")
neg("math", "fr", "Combien font 1 234 567 × 89 ? Explique la méthode.")
neg("math", "zh", "计算 3.1415926 × 2.7182818，保留6位小数。")
neg("math", "en", "Convert 0.000000123456 to scientific notation and 6.02214076e23 to decimal.")
neg("price", "en", "Is $1,299.99 a good price for a 65\" OLED, or should I wait for 999.00?")
neg("price", "de", "Lohnt sich der Tarif für 39,99 €/Monat mit 24 Monaten Laufzeit gegenüber 44,99 € ohne?")
neg("price", "ja", "価格は税込 ¥12,800 と ¥128,000 のどちらが正しいですか？")
neg("price", "pt-BR", "R$ 1.249,90 em 10x sem juros ou R$ 1.099,00 à vista? Qual compensa?")
neg("price", "en", "Budget: 83 200 000 population, 1 250 000 000 EUR, per capita spend?")
neg("duration", "en", "Marathon in 3:45:12 vs 3:52:08 — what pace per km is that?")
neg("duration", "en", "The migration ran 01:23:45.678; estimate for 10x the rows.")
neg("duration", "es", "El vuelo dura 11 h 35 min, sale a las 23:50 hora de Madrid. ¿A qué hora llego a Bogotá?")
# dates and places without a person
neg("date", "en", "I was born in spring, what's a good birthday theme for a late-March party?")
neg("date", "de", "Welcher Wochentag war der 12.05.1984? Und wie viele Tage bis heute?")
neg("date", "en", "Albert Einstein was born in 1879 in Ulm — summarise his early life for a school essay.")
neg("date", "fr", "Quels événements ont eu lieu le 14 juillet 1789 ? Résumé pour des élèves.")
neg("date", "ja", "1992年7月8日は何曜日でしたか？")
neg("date", "ru", "Сколько дней между 15.08.1982 и 01.01.2025?")
neg("place", "en", "Best things to do in Lisbon, Porto and Coimbra in 5 days?")
neg("place", "de", "Wie komme ich vom Hauptbahnhof Berlin zur Lindenstraße in Kreuzberg?")
neg("place", "zh", "上海市徐汇区有哪些好吃的本帮菜？")
neg("place", "ar", "ما هي أفضل الأماكن السياحية في الرياض وجدة؟")
neg("place", "en", "The Louvre is at Rue de Rivoli, 75001 Paris — what are the opening hours in winter?")
neg("company", "en", "Our office moved to Acme Ltd, 1 Canada Square, London E14 5AB. Update the footer text.")
neg("company", "de", "Impressum: Beispiel GmbH, Hauptstraße 5, 10115 Berlin, HRB 123456 B – ist das vollständig?")
neg("company", "fr", "Adresse du siège : Société Exemple SAS, 10 place de la Bourse, 33000 Bordeaux. Mets-la en pied de page.")
neg("company", "ja", "本社所在地：東京都千代田区丸の内1-1-1 株式会社サンプル。英語表記にしてください。")
neg("company", "es", "La sede de Ejemplo S.L. está en Paseo de la Castellana 200, 28046 Madrid; tradúcelo al inglés.")
# ports, ranges, colours, coordinates
neg("port", "en", "Open ports 22, 80, 443, 5432 and 6379 on the security group, plus range 30000-32767 for NodePorts.")
neg("port", "en", "ss -tulpn shows 0.0.0.0:11434 (ollama) and [::]:8000, which one is vLLM?")
neg("port", "de", "Passive FTP mit Ports 50000-50100 – wie konfiguriere ich vsftpd?")
neg("port", "en", "ulimit -n 1048576 and net.core.somaxconn=65535 — are these sane for 10000 connections?")
neg("color", "en", "Make a palette from #ff6347, #4682b4, #2e8b57 and #f0e68c with WCAG AA contrast.")
neg("color", "en", "Tailwind bg-[#0f172a] text-[#e2e8f0] — what are the closest named colours?")
neg("coord", "en", "Distance between 48.8584, 2.2945 and 40.6892, -74.0445 in km?")
neg("coord", "de", "Koordinaten 52°31'12.0\"N 13°24'18.0\"E – welcher Ort ist das?")
neg("coord", "en", "GeoJSON [[-122.4194, 37.7749], [-118.2437, 34.0522]] — draw a line with Leaflet")
neg("coord", "ja", "緯度35.6812、経度139.7671はどこですか？")
# passport / ID words without a number
neg("passport-word", "en", "How long does it take to renew a UK passport in summer?")
neg("passport-word", "de", "Welche Unterlagen brauche ich für einen neuen Reisepass für mein Kind?")
neg("passport-word", "fr", "Combien coûte un passeport biométrique en 2024 ?")
neg("passport-word", "es", "¿Necesito pasaporte para viajar de Madrid a Londres?")
neg("passport-word", "ru", "Какие документы нужны для загранпаспорта нового образца?")
neg("passport-word", "zh", "护照过期了还能用来坐高铁吗？")
neg("passport-word", "ar", "كم يستغرق تجديد جواز السفر في الإمارات؟")
neg("passport-word", "en", "passport.use(new LocalStrategy(...)) in Express — how do I add JWT?")
neg("passport-word", "tr", "Pasaport harcı 2024 yılında ne kadar?")
neg("passport-word", "hi", "पासपोर्ट बनवाने में कितने दिन लगते हैं?")
neg("id-word", "en", "What's the difference between an SSN and an ITIN? No numbers needed, just explain.")
neg("id-word", "de", "Wie ist die Steuer-ID aufgebaut und wie funktioniert die Prüfziffer?")
neg("id-word", "it", "Come si calcola il carattere di controllo del codice fiscale?")
neg("id-word", "pt-BR", "Como funciona o dígito verificador do CPF? Explica com pseudocódigo.")
neg("id-word", "hi", "आधार कार्ड में पता कैसे बदलें?")
neg("id-word", "nl", "Wat is het verschil tussen een BSN en een btw-identificatienummer?")
# phone-like numbers that are not phones
neg("phone-like", "en", "Emergency numbers: 112 in Europe, 911 in the US, 999 in the UK. Why different?")
neg("phone-like", "en", "HTTP 429 with Retry-After: 3600, then 503 — how should my client back off?")
neg("phone-like", "de", "Die Bevölkerung Deutschlands lag 2023 bei 84 669 326 Menschen, wie viel Prozent sind über 65?")
neg("phone-like", "fr", "La France compte 68 373 433 habitants au 1er janvier 2024 ; calcule la densité.")
neg("phone-like", "en", "CAS number 7732-18-5 and EC 231-791-2: which substance is this?")
neg("phone-like", "en", "Range 0x0000-0xFFFF vs 0-65535: same thing? And 1024-49151 are registered ports.")
neg("phone-like", "en", "Seed 20240315 gives different results on CUDA 12.1 and 12.4; determinism flags?")
neg("phone-like", "zh", "2023年中国人口为1409670000，比2022年减少了多少？")
neg("phone-like", "ja", "郵便番号 100-0005 の地域を教えてください。")
neg("phone-like", "en", "The Boeing 737-800 seats 162-189; the A320-200 150-180. Compare.")
neg("phone-like", "en", "BIC DEUTDEFFXXX vs COBADEFFXXX: which bank is which?")
neg("phone-like", "ru", "ГОСТ 7.0.97-2016 и ГОСТ Р 7.0.5-2008: чем отличаются требования к оформлению?")
neg("phone-like", "tr", "Türkiye'nin nüfusu 85 372 377, İstanbul'un 15 655 924. Oranı nedir?")
neg("phone-like", "ar", "كم عدد السكان في قطر عام 2023؟ حوالي 2 716 391 نسمة؟")
neg("phone-like", "en", "Flight LH 400 departs 13:10 from gate Z50, seat 32A — will I make the connection to UA 1234?")
# e-mail-like things that are not a person's mailbox
neg("email-like", "en", "What does the @ in @username mean on Mastodon vs in an email address? Explain the syntax only.")
neg("email-like", "en", "Kotlin: val x = list.map { it * 2 }@label — is 'return@forEach' the right syntax?")
neg("email-like", "en", "In Excel, =SUM(A1:A10)@ and the implicit intersection operator @ — what changed in 365?")
neg("email-like", "en", "Our placeholder in templates is {{user.email}} and {{support_address}}; render it with Jinja.")
neg("email-like", "en", "Is user@localhost accepted by RFC 5321, or does the domain need a dot? Explain the grammar.")
neg("email-like", "en", "svn checkout svn+ssh://svn@svn.example.org/trunk@1234 — what is @1234?")
neg("email-like", "en", "Decorator stacking: @staticmethod @lru_cache(maxsize=1024) def f(x): ... — order matters?")
neg("email-like", "de", "Was bedeutet foo@bar in einer Nix-Flake-Referenz wie github:NixOS/nixpkgs@23.11?")
neg("email-like", "ja", "CSS の @font-face と @keyframes の書き方を教えて。")
# secret-like but not secrets
neg("secret-like", "en", "Explain the sk-learn vs scikit-learn naming, and what sklearn.pipeline does.")
neg("secret-like", "en", "Where do I put OPENAI_API_KEY=<your-key-here> in a Next.js app? Use a placeholder only.")
neg("secret-like", "en", "Is -----BEGIN CERTIFICATE----- followed by MIIDdzCCAl+gAwIBAgIE a public cert or a private key?")
neg("secret-like", "en", "What is the format of an AWS access key id? Don't give a real one, only the structure.")
neg("secret-like", "en", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + rnd(B62, 43) + " ci@runner — where do I paste this public key?")
neg("secret-like", "en", "base64 of 'hello world' is aGVsbG8gd29ybGQ=, decode dGhpcyBpcyBhIHRlc3Q= too")
neg("secret-like", "en", "The CSP header has nonce-" + rnd(B62, 22) + " — does it need to change per request?")
# plain prompts
neg("plain", "en", "Write a haiku about a cat watching rain.")
neg("plain", "de", "Erkläre mir den Unterschied zwischen TCP und UDP in einfachen Worten.")
neg("plain", "fr", "Résume la Révolution française en dix lignes.")
neg("plain", "es", "¿Cuál es la diferencia entre ser y estar? Dame ejemplos.")
neg("plain", "it", "Scrivi una ricetta per la carbonara senza panna.")
neg("plain", "nl", "Geef me drie tips om beter te slapen.")
neg("plain", "pt-BR", "Me explica o que é inflação de um jeito simples.")
neg("plain", "pl", "Przetłumacz na angielski: 'Dzień dobry, jak się masz?'")
neg("plain", "sv", "Vad är skillnaden mellan en fond och en aktie?")
neg("plain", "hi", "भारत की राजधानी के बारे में पाँच वाक्य लिखो।")
neg("plain", "zh", "请用三句话介绍一下长城。")
neg("plain", "ja", "敬語の種類について簡単に説明してください。")
neg("plain", "ar", "اشرح لي الفرق بين الذكاء الاصطناعي وتعلم الآلة.")
neg("plain", "ru", "Объясни, как работает фотосинтез.")
neg("plain", "tr", "Bana İstanbul'un tarihini kısaca anlat.")


# ---- output ---------------------------------------------------------------------------------------------------

KINDS = {"email", "phone", "payment-card", "iban", "national-id", "secret", "passport", "person"}


def esc(s):
    assert "\t" not in s and "\n" not in s, s
    return s


def main():
    out = sys.stdout
    out.write("# Personal-data corpus for PersonalDataCorpusTest (issue 21). Generated by gen_personal_data_corpus.py.\n")
    out.write("# Format: UTF-8, one case a line, four tab-separated columns: id, language (BCP 47), expected kinds,"
              " text.\n")
    out.write("# Kinds are PersonalDataKind yaml names separated by commas (email, phone, payment-card, iban,"
              " national-id, secret, passport, person); '-' marks a negative (nothing personal).\n")
    out.write("# In the text, a backslash escapes: \\n is a line break, \\t a tab, \\\\ a backslash."
              " Lines starting with # and blank lines are ignored.\n")
    out.write("# Labelling rules (what a privacy officer would keep on local hardware):\n")
    out.write("#  - positive: anything that identifies or reaches a living person or unlocks an account: e-mail"
              " (also obfuscated, full-width or URL-encoded), phone, card, IBAN, national id or passport number"
              " (valid check digits), a name with a postal address or date of birth, API keys, tokens, private"
              " keys, passwords in URLs.\n")
    out.write("#  - negative: machine identifiers (UUIDs, hashes, commits, timestamps, versions, IPs, MACs,"
              " ports), business identifiers (orders, invoices, tracking, SKUs, ISBNs), numbers failing their"
              " check digit, user@host that is not a mailbox (git@github.com, root@localhost, deploy@10.0.0.1),"
              " a company's own address without a person's name, a date or a"
              " city without a name, a year of birth of a historical figure, the word passport without a number,"
              " public keys and certificates.\n")
    out.write("#  - every value is made up: e-mail domains are reserved (example.com, example.org, ...), numbers are"
              " generated with valid check digits, keys are random. They stand for real ones: a detector must not"
              " exempt reserved domains or test numbers.\n")
    ids = set()
    counters = {}
    for cat, lang, kinds, text in P + N:
        if kinds:
            assert set(kinds.split(",")) <= KINDS, kinds
        prefix = cat if kinds else "neg-" + cat
        counters[prefix] = counters.get(prefix, 0) + 1
        cid = "%s-%02d" % (prefix, counters[prefix])
        assert cid not in ids
        ids.add(cid)
        out.write("%s\t%s\t%s\t%s\n" % (cid, lang, kinds or "-", esc(text)))
    sys.stderr.write("positives %d negatives %d\n" % (len(P), len(N)))


main()
