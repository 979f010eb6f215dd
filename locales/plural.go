package locales

// CLDR plural category names as used in the catalogs' plural objects.
const (
	formZero  = "zero"
	formOne   = "one"
	formTwo   = "two"
	formFew   = "few"
	formMany  = "many"
	formOther = "other"
)

// cldrForms is every category name CLDR defines; a catalog form outside it
// is a typo.
var cldrForms = map[string]bool{
	formZero: true, formOne: true, formTwo: true,
	formFew: true, formMany: true, formOther: true,
}

// pluralForms returns the categories a language's plural objects must
// provide. Russian and Ukrainian keep "other" for fractions, which N never
// selects but a catalog stays CLDR-complete with.
func pluralForms(lang Lang) []string {
	switch lang {
	case Ru, Uk:
		return []string{formOne, formFew, formMany, formOther}
	}
	return []string{formOne, formOther}
}

// pluralForm returns the CLDR plural category of the integer n in lang.
// English (and any unsupported language): one for 1, other otherwise.
// Russian and Ukrainian: one when n%10 == 1 and n%100 != 11; few when n%10
// is 2..4 and n%100 is not 12..14; many otherwise. The sign is ignored.
func pluralForm(lang Lang, n int64) string {
	switch lang {
	case Ru, Uk:
		// The last two digits decide; taking them first means
		// math.MinInt64 needs no negation.
		n %= 100
		if n < 0 {
			n = -n
		}
		mod10 := n % 10
		switch {
		case mod10 == 1 && n != 11:
			return formOne
		case mod10 >= 2 && mod10 <= 4 && (n < 12 || n > 14):
			return formFew
		default:
			return formMany
		}
	}
	if n == 1 || n == -1 {
		return formOne
	}
	return formOther
}
