package dev.kinference.k8s;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.interfaces.ECPrivateKey;
import java.security.spec.ECGenParameterSpec;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.bouncycastle.asn1.ASN1ObjectIdentifier;
import org.bouncycastle.asn1.DERBitString;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.asn1.x509.SubjectPublicKeyInfo;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * Keys and certificates made at test time, the way a cluster's PKI looks: a CA, a server certificate for
 * 127.0.0.1 signed by it, client certificates, and private keys in the three PEM forms kubeconfig files carry
 * (PKCS#8, PKCS#1, SEC1). BouncyCastle builds the certificates; it is on the test class path through fabric8's
 * mock web server (test scope only, nothing added to the build).
 */
final class TestPki {

  private static final AtomicLong SERIAL = new AtomicLong(System.nanoTime());

  private TestPki() {}

  /** A key pair and its certificate. */
  record Issued(KeyPair keys, X509Certificate certificate) {
    String certificatePem() {
      return pem("CERTIFICATE", encoded(certificate));
    }

    byte[] certificatePemBytes() {
      return certificatePem().getBytes(StandardCharsets.US_ASCII);
    }

    /** The private key as {@code PRIVATE KEY} (PKCS#8). */
    String pkcs8Pem() {
      return TestPki.pkcs8Pem(keys.getPrivate());
    }

    /** The private key as {@code RSA PRIVATE KEY} (PKCS#1); RSA keys only. */
    String pkcs1Pem() {
      return TestPki.pkcs1Pem(keys.getPrivate());
    }

    /** The private key as {@code EC PRIVATE KEY} (SEC1, naming its curve as openssl writes it); EC keys only. */
    String sec1Pem() {
      return TestPki.sec1Pem(keys, true);
    }

    String subject() {
      return certificate.getSubjectX500Principal().getName();
    }
  }

  static KeyPair ecKeys() {
    try {
      KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
      g.initialize(new ECGenParameterSpec("secp256r1"));
      return g.generateKeyPair();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  static KeyPair rsaKeys() {
    try {
      KeyPairGenerator g = KeyPairGenerator.getInstance("RSA");
      g.initialize(2048);
      return g.generateKeyPair();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  /** A self-signed certificate authority. */
  static Issued ca(String name) {
    KeyPair keys = ecKeys();
    X500Name subject = new X500Name("CN=" + name);
    return new Issued(keys, sign(subject, keys, subject, keys.getPrivate(), builder -> {
      builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
      builder.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
    }));
  }

  /** A server certificate for {@code 127.0.0.1} and {@code localhost}, signed by {@code ca}. */
  static Issued server(Issued ca) {
    return server(ca, new GeneralNames(new GeneralName[] {
        new GeneralName(GeneralName.iPAddress, "127.0.0.1"), new GeneralName(GeneralName.dNSName, "localhost")}));
  }

  /** A server certificate for another host only: valid, trusted, but not for 127.0.0.1. */
  static Issued serverForAnotherHost(Issued ca) {
    return server(ca, new GeneralNames(new GeneralName(GeneralName.dNSName, "api.elsewhere.example")));
  }

  /** A server certificate for 127.0.0.1 that expired yesterday. */
  static Issued expiredServer(Issued ca) {
    KeyPair keys = ecKeys();
    Instant now = Instant.now();
    return new Issued(keys, sign(new X500Name("CN=kube-apiserver"), keys, issuer(ca), ca.keys().getPrivate(),
        now.minus(Duration.ofDays(2)), now.minus(Duration.ofDays(1)), builder -> builder.addExtension(
            Extension.subjectAlternativeName, false, new GeneralNames(new GeneralName(GeneralName.iPAddress,
                "127.0.0.1")))));
  }

  private static Issued server(Issued ca, GeneralNames names) {
    KeyPair keys = ecKeys();
    return new Issued(keys, sign(new X500Name("CN=kube-apiserver"), keys, issuer(ca), ca.keys().getPrivate(),
        builder -> {
          builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
          builder.addExtension(Extension.subjectAlternativeName, false, names);
          builder.addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(KeyPurposeId.id_kp_serverAuth));
        }));
  }

  /** A client certificate for user {@code user} (group {@code O}), with a key of the given pair. */
  static Issued client(Issued ca, String user, KeyPair keys) {
    return new Issued(keys, sign(new X500Name("CN=" + user + ",O=system:masters"), keys, issuer(ca),
        ca.keys().getPrivate(), builder -> {
          builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
          builder.addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(KeyPurposeId.id_kp_clientAuth));
        }));
  }

  private static X500Name issuer(Issued ca) {
    return X500Name.getInstance(ca.certificate().getSubjectX500Principal().getEncoded());
  }

  private interface Extensions {
    void add(X509v3CertificateBuilder builder) throws IOException;
  }

  private static X509Certificate sign(X500Name subject, KeyPair keys, X500Name issuer, PrivateKey issuerKey,
      Extensions extensions) {
    Instant now = Instant.now();
    return sign(subject, keys, issuer, issuerKey, now.minus(Duration.ofHours(1)), now.plus(Duration.ofDays(1)),
        extensions);
  }

  private static X509Certificate sign(X500Name subject, KeyPair keys, X500Name issuer, PrivateKey issuerKey,
      Instant notBefore, Instant notAfter, Extensions extensions) {
    try {
      X509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(issuer,
          BigInteger.valueOf(SERIAL.incrementAndGet()), Date.from(notBefore), Date.from(notAfter), subject,
          keys.getPublic());
      extensions.add(b);
      String algorithm = issuerKey.getAlgorithm().equals("RSA") ? "SHA256withRSA" : "SHA256withECDSA";
      return new JcaX509CertificateConverter().getCertificate(
          b.build(new JcaContentSignerBuilder(algorithm).build(issuerKey)));
    } catch (IOException | GeneralSecurityException | OperatorCreationException e) {
      throw new IllegalStateException("cannot make a test certificate", e);
    }
  }

  static String pem(String type, byte[] der) {
    return "-----BEGIN " + type + "-----\n"
        + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der) + "\n-----END " + type + "-----\n";
  }

  static String pkcs8Pem(PrivateKey key) {
    return pem("PRIVATE KEY", key.getEncoded());
  }

  static String pkcs1Pem(PrivateKey key) {
    if (!key.getAlgorithm().equals("RSA")) {
      throw new IllegalArgumentException("PKCS#1 holds RSA keys only");
    }
    try {
      return pem("RSA PRIVATE KEY", PrivateKeyInfo.getInstance(key.getEncoded()).parsePrivateKey().toASN1Primitive()
          .getEncoded());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** SEC1 {@code ECPrivateKey}; {@code withCurve} false leaves out the {@code [0] parameters} (rare, but legal). */
  static String sec1Pem(KeyPair keys, boolean withCurve) {
    ECPrivateKey key = (ECPrivateKey) keys.getPrivate();
    try {
      SubjectPublicKeyInfo pub = SubjectPublicKeyInfo.getInstance(keys.getPublic().getEncoded());
      ASN1ObjectIdentifier curve = ASN1ObjectIdentifier.getInstance(pub.getAlgorithm().getParameters());
      org.bouncycastle.asn1.sec.ECPrivateKey sec1 = new org.bouncycastle.asn1.sec.ECPrivateKey(
          key.getParams().getOrder().bitLength(), key.getS(), new DERBitString(pub.getPublicKeyData().getBytes()),
          withCurve ? curve : null);
      return pem("EC PRIVATE KEY", sec1.getEncoded());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static byte[] encoded(X509Certificate c) {
    try {
      return c.getEncoded();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Several certificates in one PEM bundle, as a ca.crt may hold during a CA rotation. */
  static byte[] bundle(List<Issued> certificates) {
    StringWriter out = new StringWriter();
    for (Issued i : certificates) {
      out.write(i.certificatePem());
    }
    return out.toString().getBytes(StandardCharsets.US_ASCII);
  }

  static String base64(String text) {
    return Base64.getEncoder().encodeToString(text.getBytes(StandardCharsets.UTF_8));
  }
}
