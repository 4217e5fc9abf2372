/** Example: the router embedded in a plain Java program. */
module dev.kinference.examples.embedded {
  requires dev.kinference.core;
}
