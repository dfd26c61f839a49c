// placeholder, replaced by the differential tests
