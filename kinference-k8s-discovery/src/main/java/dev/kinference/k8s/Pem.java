package dev.kinference.k8s;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * PEM certificates and private keys as kubeconfig files and service-account mounts hold them: X.509 certificates,
 * and private keys in PKCS#8 ({@code PRIVATE KEY}), PKCS#1 ({@code RSA PRIVATE KEY}) or SEC1
 * ({@code EC PRIVATE KEY}) form. The last two are rewrapped as PKCS#8 so the JDK can read them without a
 * third-party provider. Stateless.
 */
final class Pem {

  private static final Pattern BLOCK =
      Pattern.compile("-----BEGIN ([A-Z0-9 ]+)-----([A-Za-z0-9+/=\\s]*?)-----END \\1-----");
  // DER object identifiers, encoded (tag 06, length, value).
  private static final byte[] RSA_ENCRYPTION_OID =
      {0x06, 0x09, 0x2a, (byte) 0x86, 0x48, (byte) 0x86, (byte) 0xf7, 0x0d, 0x01, 0x01, 0x01};
  private static final byte[] EC_PUBLIC_KEY_OID = {0x06, 0x07, 0x2a, (byte) 0x86, 0x48, (byte) 0xce, 0x3d, 0x02, 0x01};

  private Pem() {}

  /** Every certificate in {@code pem}; at least one. */
  static List<X509Certificate> certificates(byte[] pem, String what) {
    try {
      CertificateFactory factory = CertificateFactory.getInstance("X.509");
      Collection<? extends Certificate> found = factory.generateCertificates(new ByteArrayInputStream(pem));
      List<X509Certificate> out = new ArrayList<>();
      for (Certificate c : found) {
        out.add((X509Certificate) c);
      }
      if (out.isEmpty()) {
        throw new IllegalArgumentException(what + " holds no certificate");
      }
      return out;
    } catch (GeneralSecurityException e) {
      throw new IllegalArgumentException(what + " is not a PEM certificate bundle: " + e.getMessage(), e);
    }
  }

  /** The first private key in {@code pem}. */
  static PrivateKey privateKey(byte[] pem, String what) {
    String text = new String(pem, StandardCharsets.US_ASCII);
    Matcher m = BLOCK.matcher(text);
    while (m.find()) {
      String type = m.group(1);
      if (!type.endsWith("PRIVATE KEY")) {
        continue;
      }
      byte[] der = Base64.getMimeDecoder().decode(m.group(2));
      try {
        return switch (type) {
          case "PRIVATE KEY" -> pkcs8(der, what);
          case "RSA PRIVATE KEY" -> KeyFactory.getInstance("RSA")
              .generatePrivate(new PKCS8EncodedKeySpec(wrapPkcs8(RSA_ENCRYPTION_OID, new byte[] {0x05, 0x00}, der)));
          case "EC PRIVATE KEY" -> KeyFactory.getInstance("EC")
              .generatePrivate(new PKCS8EncodedKeySpec(wrapPkcs8(EC_PUBLIC_KEY_OID, sec1Curve(der, what), der)));
          default -> throw new IllegalArgumentException(what + ": unsupported key type '" + type
              + "' (encrypted keys are not supported)");
        };
      } catch (GeneralSecurityException e) {
        throw new IllegalArgumentException(what + ": unreadable " + type + ": " + e.getMessage(), e);
      }
    }
    throw new IllegalArgumentException(what + " holds no PEM private key");
  }

  /**
   * Checks that {@code key} is the private half of {@code certificate}'s public key, by signing a challenge with one
   * and verifying it with the other (as Go's {@code tls.X509KeyPair} checks when kubectl loads a kubeconfig).
   *
   * @throws IllegalArgumentException when it is not
   */
  static void checkKeyPair(X509Certificate certificate, PrivateKey key) {
    String algorithm = switch (key.getAlgorithm()) {
      case "RSA" -> "SHA256withRSA";
      case "EC" -> "SHA256withECDSA";
      case "Ed25519", "EdDSA" -> "Ed25519";
      default -> throw new IllegalArgumentException("client key: unsupported key algorithm " + key.getAlgorithm());
    };
    boolean matches;
    try {
      byte[] challenge = "kinference client key check".getBytes(StandardCharsets.US_ASCII);
      Signature signer = Signature.getInstance(algorithm);
      signer.initSign(key);
      signer.update(challenge);
      byte[] signature = signer.sign();
      Signature verifier = Signature.getInstance(algorithm);
      verifier.initVerify(certificate.getPublicKey());
      verifier.update(challenge);
      matches = verifier.verify(signature);
    } catch (GeneralSecurityException e) {
      matches = false; // e.g. an RSA key against an EC certificate
    }
    if (!matches) {
      throw new IllegalArgumentException("client key does not belong to the client certificate");
    }
  }

  /** A key store holding {@code certificates} as trusted entries. */
  static KeyStore trustStore(List<X509Certificate> certificates) throws GeneralSecurityException {
    KeyStore ks = emptyKeyStore();
    for (int i = 0; i < certificates.size(); i++) {
      ks.setCertificateEntry("ca-" + i, certificates.get(i));
    }
    return ks;
  }

  /** A key store holding one client key and its chain, protected by {@code password}. */
  static KeyStore keyStore(PrivateKey key, List<X509Certificate> chain, char[] password)
      throws GeneralSecurityException {
    KeyStore ks = emptyKeyStore();
    ks.setKeyEntry("client", key, password, chain.toArray(new Certificate[0]));
    return ks;
  }

  private static KeyStore emptyKeyStore() throws GeneralSecurityException {
    KeyStore ks = KeyStore.getInstance("PKCS12");
    try {
      ks.load(null, null);
    } catch (java.io.IOException impossible) {
      throw new GeneralSecurityException(impossible);
    }
    return ks;
  }

  private static PrivateKey pkcs8(byte[] der, String what) throws GeneralSecurityException {
    GeneralSecurityException last = null;
    for (String algorithm : new String[] {"RSA", "EC", "Ed25519"}) {
      try {
        return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
      } catch (GeneralSecurityException e) {
        last = e;
      }
    }
    throw new GeneralSecurityException(what + ": PKCS#8 key is neither RSA, EC nor Ed25519", last);
  }

  /** {@code PrivateKeyInfo ::= SEQUENCE { 0, AlgorithmIdentifier { oid, params }, OCTET STRING key }}. */
  static byte[] wrapPkcs8(byte[] algorithmOid, byte[] parameters, byte[] key) {
    byte[] version = {0x02, 0x01, 0x00};
    byte[] algorithm = tlv(0x30, concat(algorithmOid, parameters));
    byte[] octets = tlv(0x04, key);
    return tlv(0x30, concat(version, algorithm, octets));
  }

  /** The named-curve OID (tag included) in a SEC1 {@code ECPrivateKey}'s {@code [0] parameters}. */
  private static byte[] sec1Curve(byte[] der, String what) {
    // ECPrivateKey ::= SEQUENCE { version INTEGER, privateKey OCTET STRING, [0] ECParameters, [1] BIT STRING }
    Der seq = new Der(der, 0);
    if (seq.tag != 0x30) {
      throw new IllegalArgumentException(what + ": EC key is not a DER sequence");
    }
    int pos = seq.valueStart;
    while (pos < seq.valueEnd) {
      Der item = new Der(der, pos);
      if (item.tag == 0xa0) {
        Der oid = new Der(der, item.valueStart);
        if (oid.tag != 0x06) {
          break;
        }
        byte[] out = new byte[oid.end - item.valueStart];
        System.arraycopy(der, item.valueStart, out, 0, out.length);
        return out;
      }
      pos = item.end;
    }
    throw new IllegalArgumentException(what + ": EC key names no curve; convert it to PKCS#8 "
        + "(openssl pkcs8 -topk8 -nocrypt)");
  }

  private static byte[] tlv(int tag, byte[] value) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(value.length + 6);
    out.write(tag);
    int n = value.length;
    if (n < 0x80) {
      out.write(n);
    } else if (n < 0x100) {
      out.write(0x81);
      out.write(n);
    } else if (n < 0x10000) {
      out.write(0x82);
      out.write(n >> 8);
      out.write(n & 0xff);
    } else {
      out.write(0x83);
      out.write(n >> 16);
      out.write((n >> 8) & 0xff);
      out.write(n & 0xff);
    }
    out.writeBytes(value);
    return out.toByteArray();
  }

  private static byte[] concat(byte[]... parts) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (byte[] p : parts) {
      out.writeBytes(p);
    }
    return out.toByteArray();
  }

  /** One DER tag-length-value header. */
  private static final class Der {
    final int tag;
    final int valueStart;
    final int valueEnd;
    final int end;

    Der(byte[] der, int pos) {
      if (pos + 2 > der.length) {
        throw new IllegalArgumentException("truncated DER");
      }
      tag = der[pos] & 0xff;
      int len = der[pos + 1] & 0xff;
      int start = pos + 2;
      if (len >= 0x80) {
        int bytes = len & 0x7f;
        if (bytes < 1 || bytes > 3 || start + bytes > der.length) {
          throw new IllegalArgumentException("bad DER length");
        }
        len = 0;
        for (int i = 0; i < bytes; i++) {
          len = (len << 8) | (der[start + i] & 0xff);
        }
        start += bytes;
      }
      if (start + len > der.length) {
        throw new IllegalArgumentException("truncated DER");
      }
      valueStart = start;
      valueEnd = start + len;
      end = valueEnd;
    }
  }
}
