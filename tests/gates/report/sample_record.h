// A landing record with every gate filled the way the gates fill them (test input for the report
// writers; the numbers are made up for the format tests, shaped like the seed's r39 record).
#pragma once
#include "report/landing_record.h"

pfx::gates::LandingRecord sample_record();
