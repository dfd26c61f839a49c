// placeholder, replaced by the property tests
